import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "gen/**", "node_modules/**", "data/**", "bench/results/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
    },
  },
  {
    // Node 20's V8 (11.3) builds an object literal that starts with a spread
    // and goes on (`{ ...a, b: 1 }`, `{ ...a, ...b }`) through a slow path: about
    // 0.5 us per element after the spread, against 0.03 us on Node 22 and 24.
    // On the hot path that was several microseconds per check (a site check's
    // result alone, 6 us). Object.assign({}, a, { b: 1 }) means the same and
    // stays fast, as does a literal whose spreads come after its properties.
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "ObjectExpression > SpreadElement:first-child ~ *",
          message: "An object literal that starts with a spread and goes on is slow on Node 20 (~0.5 us per element): write Object.assign({}, a, { ... }), or put the properties before the spreads.",
        },
        // Header names are the target's choice (issue 28): on an ordinary object a field named
        // __proto__ or constructor finds Object.prototype's, and a site that was up read as a
        // failed request. Maps are built without a prototype and read by own property
        // (src/probe/http/header-map.ts); a map that crossed a thread arrives as an ordinary object.
        {
          selector: "VariableDeclarator[id.name=/headers$/i][init.type='ObjectExpression']",
          message: "A header map keyed by names a target chose must not be an object literal: a field named __proto__ or constructor would find Object.prototype's. Use headerMapOf() (src/probe/http/header-map.ts), Object.create(null), Object.fromEntries or a Map.",
        },
        {
          // A name held in an UPPER_CASE constant is our own (API_KEY_HEADER), not the target's.
          selector:
            "MemberExpression[computed=true][property.type!='Literal']:not([property.name=/^[A-Z][A-Z0-9_]*$/])[object.name=/^headers$/i], MemberExpression[computed=true][property.type!='Literal']:not([property.name=/^[A-Z][A-Z0-9_]*$/])[object.property.name=/^headers$/i]",
          message: "headers[name] with a name from outside finds Object.prototype's members (constructor, __proto__) on an ordinary object, and a header map that crossed a thread is one: read with headerValue() (src/probe/http/header-map.ts, Object.hasOwn), or use a Map.",
        },
      ],
    },
  },
);
