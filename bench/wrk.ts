import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What one wrk run measured. Latencies are milliseconds from request sent to response read. */
export interface LoadResult {
  readonly requests: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Socket errors, timeouts and non-2xx/3xx answers: a run with any is not a clean measurement. */
  readonly errors: number;
}

export interface LoadRun {
  readonly url: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly headers?: Readonly<Record<string, string>>;
}

// wrk calls done() once with its merged statistics; printing them as one JSON line
// spares the bench from parsing wrk's human-readable report.
const REPORT_SCRIPT = `
local headers = os.getenv("BENCH_WRK_HEADERS")
if headers ~= nil and headers ~= "" then
  for line in string.gmatch(headers, "[^\\n]+") do
    local name, value = string.match(line, "^([^:]+): (.*)$")
    wrk.headers[name] = value
  end
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_JSON {"requests":%d,"durationUs":%d,"errors":%d,"p50Us":%d,"p99Us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

let scriptPath: string | undefined;

function script(): string {
  if (scriptPath === undefined) {
    scriptPath = join(mkdtempSync(join(tmpdir(), "sitediag-bench-wrk-")), "report.lua");
    writeFileSync(scriptPath, REPORT_SCRIPT);
  }
  return scriptPath;
}

/** Runs wrk at fixed concurrency for a fixed time; one thread per connection up to two (the machine's cores are shared). */
export async function runWrk(run: LoadRun): Promise<LoadResult> {
  const threads = Math.min(2, run.connections);
  // wrk's own timeout (2 s by default) would count a slow but correct answer as an error.
  const args = [
    "-t",
    String(threads),
    "-c",
    String(run.connections),
    "-d",
    `${run.durationSeconds}s`,
    "--timeout",
    "30s",
    "-s",
    script(),
    run.url,
  ];
  const headers = Object.entries(run.headers ?? {})
    .map(([name, value]) => `${name}: ${value}`)
    .join("\n");
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn("wrk", args, { env: { ...process.env, BENCH_WRK_HEADERS: headers }, stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))));
  });
  const line = /^BENCH_JSON (.*)$/m.exec(output)?.[1];
  if (line === undefined) throw new Error(`wrk printed no report: ${output}`);
  const report = JSON.parse(line) as { requests: number; durationUs: number; errors: number; p50Us: number; p99Us: number };
  return {
    requests: report.requests,
    perSecond: report.requests / (report.durationUs / 1e6),
    p50Ms: report.p50Us / 1_000,
    p99Ms: report.p99Us / 1_000,
    errors: report.errors,
  };
}

export function wrkAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn("wrk", ["--version"], { stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("exit", () => resolve(true));
  });
}
