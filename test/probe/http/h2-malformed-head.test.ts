import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const RUN = fileURLToPath(new URL("../../fixtures/h2-malformed-head-run.ts", import.meta.url));

/**
 * A target that answers over HTTP/2 with a head nghttp2 refuses part-way
 * (h2-malformed-head-run.ts says which) must cost its own check a verdict and
 * nothing else. Before the probe closed an HTTP/2 session gracefully, the
 * stream's reset was still unwritten when the session was destroyed, the
 * stream was left to the garbage collector with fields of its head held,
 * and Node aborted the whole process within a few dozen such checks
 * (Assertion failed: (current_nghttp2_memory_) == (0); seen on Node 20 and
 * 24, on a probe thread and on the main thread). The checks run in a child
 * process, so such an abort fails this test instead of the test runner.
 */
it("HTTP/2 heads refused part-way are a verdict each, and the process lives (160 checks of each kind on a probe thread)", async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    // Through tsx: the run is a test fixture, which the build leaves out.
    const child = execFile(
      process.execPath,
      ["--import", "tsx", RUN, "40"],
      // Not a vitest run: without vitest's variables, so the fixtures it loads do not ask vitest for this run's build.
      { timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: withoutVitest(process.env) },
      (_error, out, err) => resolve({ code: child.exitCode, stdout: out, stderr: err }),
    );
  });
  expect(stderr).not.toContain("Assertion failed");
  expect(code).toBe(0);
  const last = stdout.trim().split("\n").at(-1) ?? "{}";
  const report = JSON.parse(last) as { survived?: boolean; codes?: Record<string, string[]> };
  expect(report.survived).toBe(true);
  // Chromium refuses each of these heads too (ERR_HTTP2_PROTOCOL_ERROR): down, with the stream reset named.
  for (const seen of Object.values(report.codes ?? {})) expect(seen).toEqual(["down:http_h2_stream_reset"]);
  expect(Object.keys(report.codes ?? {})).toHaveLength(5);
}, 150_000);

function withoutVitest(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("VITEST")));
}
