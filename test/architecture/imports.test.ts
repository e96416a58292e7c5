import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layering rules of ARCHITECTURE.md, read off the import statements of
 * src/: no import circle, and each layer imports only what lies below it.
 */
const SRC = resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** The project files each file of src/ imports (relative imports only; packages and node: are not layers). */
const graph = new Map<string, string[]>();
for (const file of sourceFiles(SRC)) {
  const text = readFileSync(file, "utf8");
  const imports = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)\.js"/g)].map((match) =>
    resolve(dirname(file), `${match[1] ?? ""}.ts`),
  );
  graph.set(
    relative(SRC, file),
    imports.map((target) => relative(SRC, target)),
  );
}

/**
 * The folder under src/ a file belongs to; "(gen)" for generated code, below every layer; "shared" for the
 * words every layer uses (limits, failure codes, batch and vantage-list words), just above it; "(top)" for
 * the files left at the top (config.ts, package-info.ts, main.ts).
 */
function layerOf(path: string): string {
  if (path.startsWith("../gen/")) return "(gen)";
  return path.includes("/") ? (path.split("/")[0] ?? "") : "(top)";
}

describe("the import graph of src/", () => {
  it("has no circle", () => {
    const state = new Map<string, "visiting" | "done">();
    const circles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "visiting") {
        circles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "visiting");
      for (const target of graph.get(file) ?? []) if (graph.has(target)) visit(target, [...path, file]);
      state.set(file, "done");
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it.each([
    // shared holds words, not behaviour: it imports only itself and the generated messages, so any layer may read it.
    ["shared", ["shared", "(gen)"]],
    // observability is a leaf: the logger, metrics, redaction and request ids; it may read only shared words and top-level settings.
    ["observability", ["observability", "shared", "(top)", "(gen)"]],
    ["probe", ["probe", "shared", "(top)", "(gen)"]],
    // A domain's registration (RDAP) is looked up over the prober and read into the diagnostics' warnings.
    ["registration", ["registration", "diagnostics", "probe", "shared", "(top)", "(gen)"]],
    ["diagnostics", ["diagnostics", "registration", "probe", "shared", "(top)", "(gen)"]],
    ["runner", ["runner", "diagnostics", "registration", "probe", "shared", "(top)", "(gen)"]],
    ["access", ["access", "shared", "(top)", "(gen)"]],
    // Vantages carry a diagnostic to where it runs (this process, or another region's instances) and back.
    ["vantage", ["vantage", "runner", "diagnostics", "registration", "probe", "shared", "(top)", "(gen)"]],
    // The service validates input, runs the diagnostics and maps results to messages; it never knows the server that calls it.
    ["service", ["service", "vantage", "runner", "diagnostics", "registration", "probe", "access", "shared", "(top)", "(gen)"]],
    // The server composes everything below it; only the command line is above it.
    [
      "server",
      [
        "server",
        "service",
        "vantage",
        "runner",
        "diagnostics",
        "registration",
        "probe",
        "access",
        "observability",
        "openapi",
        "shared",
        "(top)",
        "(gen)",
      ],
    ],
  ] as const)("%s imports only from %j", (layer, allowed) => {
    const offending = [...graph.entries()]
      .filter(([file]) => layerOf(file) === layer)
      .flatMap(([file, targets]) =>
        targets.filter((target) => !(allowed as readonly string[]).includes(layerOf(target))).map((target) => `${file} -> ${target}`),
      );
    expect(offending).toEqual([]);
  });

  /** The sub-layer of a file under server/: its folder there, "(composition)" for the files that compose the server (start-server.ts). */
  const serverLayerOf = (path: string): string | undefined => {
    const [top, folder, file] = path.split("/");
    if (top !== "server") return undefined;
    return file === undefined ? "(composition)" : folder;
  };

  // server/ is layered too: door/ (the listener, early answers, the envelope, the Call and the route table) at the bottom,
  // each door and concern above it, never one beside another; the files directly in server/ compose them.
  it.each([
    ["door", ["door"]],
    ["rest", ["rest", "door"]],
    ["rpc", ["rpc", "door"]],
    ["ops", ["ops", "door"]],
    ["admission", ["admission", "door"]],
    ["observers", ["observers", "door"]],
  ] as const)("server/%s imports within server/ only from %j", (layer, allowed) => {
    const offending = [...graph.entries()]
      .filter(([file]) => serverLayerOf(file) === layer)
      .flatMap(([file, targets]) =>
        targets
          .filter((target) => {
            const targetLayer = serverLayerOf(target);
            return targetLayer !== undefined && !(allowed as readonly string[]).includes(targetLayer);
          })
          .map((target) => `${file} -> ${target}`),
      );
    expect(offending).toEqual([]);
  });

  // vantage/ is the seam (vantage-fanout.ts) and its in-process side; the Redis engine behind it (vantage/redis/)
  // is reached only where an instance chooses its engine, so another engine would replace one folder and one file.
  it("vantage/ reaches the Redis engine only from fanout-from-config.ts; nothing outside vantage/ reaches it", () => {
    const offending = [...graph.entries()]
      .filter(([file]) => !file.startsWith("vantage/redis/") && file !== "vantage/fanout-from-config.ts")
      .flatMap(([file, targets]) =>
        targets.filter((target) => target.startsWith("vantage/redis/")).map((target) => `${file} -> ${target}`),
      );
    expect(offending).toEqual([]);
  });

  it("never imports from test/", () => {
    const offending = [...graph.entries()].flatMap(([file, targets]) =>
      targets.filter((target) => target.startsWith("../")).map((target) => `${file} -> ${target}`),
    );
    expect(offending.filter((edge) => !edge.includes("../gen/"))).toEqual([]);
  });
});
