import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Node 20's V8 (11.3) builds an object literal that starts with a spread and
// goes on (`{ ...a, b: 1 }`, `{ ...a, ...b }`) through a slow path, priced per
// element after the spread; Node 22 and 24 do not. Object.assign({}, a, { b: 1 })
// means the same and stays fast, as does a literal whose spreads come after its
// properties. Figures: docs/benchmarks.md, "Node 20's slow paths".
const LEADING_SPREAD_RULE = {
  selector: "ObjectExpression > SpreadElement:first-child ~ *",
  message:
    "On the hot path, an object literal that starts with a spread and goes on is slow on Node 20 (see docs/benchmarks.md): write Object.assign({}, a, { ... }), or put the properties before the spreads.",
};

// Header names are the target's choice: on an ordinary object a field named
// __proto__ or constructor finds Object.prototype's, and a site that was up read as a
// failed request. Maps are built without a prototype and read by own property
// (src/probe/http/header-map.ts); a map that crossed a thread arrives as an ordinary object.
const HEADER_MAP_RULES = [
  {
    selector: "VariableDeclarator[id.name=/headers$/i][init.type='ObjectExpression']",
    message:
      "A header map keyed by names a target chose must not be an object literal: a field named __proto__ or constructor would find Object.prototype's. Use headerMapOf() (src/probe/http/header-map.ts), Object.create(null), Object.fromEntries or a Map.",
  },
  {
    // A name held in an UPPER_CASE constant is our own (API_KEY_HEADER), not the target's.
    selector:
      "MemberExpression[computed=true][property.type!='Literal']:not([property.name=/^[A-Z][A-Z0-9_]*$/])[object.name=/^headers$/i], MemberExpression[computed=true][property.type!='Literal']:not([property.name=/^[A-Z][A-Z0-9_]*$/])[object.property.name=/^headers$/i]",
    message:
      "headers[name] with a name from outside finds Object.prototype's members (constructor, __proto__) on an ordinary object, and a header map that crossed a thread is one: read with headerValue() (src/probe/http/header-map.ts, Object.hasOwn), or use a Map.",
  },
];

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
    // Rules that need the types (each file's tsconfig: tsconfig.json, or web/tsconfig.json for the page): a
    // promise nobody awaits or catches loses its rejection, one handed where a callback's result is ignored
    // (an event listener, forEach) runs unchecked, and a switch over a union must name every member, so a
    // member added later is a compile-time finding where it is handled, not a silent default.
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": "error",
    },
  },
  {
    // Header maps are keyed by names the target chose, everywhere in src/.
    files: ["src/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", ...HEADER_MAP_RULES] },
  },
  {
    // Only the code that runs per hop or per call: there a leading spread was a
    // measurable share of a check on Node 20 (docs/benchmarks.md, "Node 20's slow
    // paths"). Start-up, the CLI, config and the OpenAPI document run once, and
    // read better as plain spreads. ESLint does not merge one rule's options across
    // blocks, so the header rules are repeated here.
    files: [
      "src/probe/**/*.ts",
      "src/diagnostics/**/*.ts",
      "src/runner/**/*.ts",
      "src/service/**/*.ts",
      "src/server/**/*.ts",
      "src/access/**/*.ts",
      "src/observability/**/*.ts",
    ],
    rules: { "no-restricted-syntax": ["error", LEADING_SPREAD_RULE, ...HEADER_MAP_RULES] },
  },
);
