/**
 * Summarises a V8 .cpuprofile (from BENCH_CPU_PROF) as self time by function
 * and by file, heaviest first:
 *
 *   node dist/bench/profile-summary.js PROFILE.cpuprofile [ROWS]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const [path, rowsArg] = process.argv.slice(2);
if (path === undefined) {
  console.error("usage: node dist/bench/profile-summary.js PROFILE.cpuprofile [ROWS]");
  process.exit(2);
}
const rows = Number(rowsArg ?? 25);
const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, index) => {
  const micros = profile.timeDeltas[index] ?? 0;
  const frame = byId.get(id)?.callFrame;
  if (frame === undefined) return;
  total += micros;
  const file = shorten(frame.url) || `(${frame.functionName || "native"})`;
  add(byFunction, `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`, micros);
  add(byFile, file, micros);
});

for (const [title, table] of [
  ["self time by function", byFunction],
  ["self time by file", byFile],
] as const) {
  console.log(`\n${title} (of ${(total / 1e6).toFixed(1)} s sampled)`);
  for (const [name, micros] of [...table].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
}

function add(table: Map<string, number>, key: string, micros: number): void {
  table.set(key, (table.get(key) ?? 0) + micros);
}

function shorten(url: string): string {
  return url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, "$1/");
}
