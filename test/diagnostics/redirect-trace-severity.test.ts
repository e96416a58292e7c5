import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TraceRedirectsResponseSchema, WarningSeverity } from "../../gen/sitediag/v1/diagnostics_pb.js";
import {
  hasProblem,
  TRACE_WARNING_SEVERITY,
  TRACE_WARNINGS,
  traceWarning,
  type TraceWarningCode,
} from "../../src/diagnostics/redirect-trace-result.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { toTraceRedirectsResponse } from "../../src/service/trace-redirects.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CODES = Object.keys(TRACE_WARNINGS) as TraceWarningCode[];

/** The severity column of a documented warning table: code -> severity. */
function documentedSeverities(file: string): Record<string, string> {
  const rows = readFileSync(join(ROOT, file), "utf8").matchAll(/^\| `([a-z0-9_]+)` \| (info|warning|problem) \|/gm);
  return Object.fromEntries([...rows].map((row) => [row[1], row[2]]));
}

describe("warning severities", () => {
  it("gives every code one severity, and the downgrade and a broken chain are problems", () => {
    expect(Object.keys(TRACE_WARNING_SEVERITY).sort()).toEqual([...CODES].sort());
    expect(TRACE_WARNING_SEVERITY.https_downgrade).toBe("problem");
    expect(TRACE_WARNING_SEVERITY.redirect_loop).toBe("problem");
    expect(TRACE_WARNING_SEVERITY.temporary_redirect).toBe("warning");
    expect(TRACE_WARNING_SEVERITY.head_refused_get_used).toBe("info");
  });

  it.each(["README.md", "docs/redirect-check.md"])("is documented code for code in %s", (file) => {
    expect(documentedSeverities(file)).toEqual(TRACE_WARNING_SEVERITY);
  });

  it("is attached to each warning, and a problem makes the trace one to look at", () => {
    const downgrade = traceWarning("https_downgrade", "Hop 1 redirects from HTTPS to plain HTTP: http://example.com/", 1);
    expect(downgrade).toEqual({
      code: "https_downgrade",
      message: "Hop 1 redirects from HTTPS to plain HTTP: http://example.com/",
      hop: 1,
      severity: "problem",
    });
    expect(hasProblem([traceWarning("temporary_redirect", "302", 1), traceWarning("host_changed", "moved", 1)])).toBe(false);
    expect(hasProblem([traceWarning("temporary_redirect", "302", 1), downgrade])).toBe(true);
  });

  it("reaches the message as the enum and REST as its word, for every code", () => {
    const result = {
      input: "https://example.com/",
      redirects: 1,
      finalUrl: "http://example.com/",
      finalStatus: 200,
      totalTimeMs: 5,
      chainStatus: "redirects_detected" as const,
      chain: [],
      warnings: CODES.map((code) => traceWarning(code, code, null)),
    };
    const message = toTraceRedirectsResponse(result);
    const words: Record<string, WarningSeverity> = {
      info: WarningSeverity.INFO,
      warning: WarningSeverity.WARNING,
      problem: WarningSeverity.PROBLEM,
    };
    expect(message.warnings.map((warning) => warning.severity)).toEqual(CODES.map((code) => words[TRACE_WARNING_SEVERITY[code]]));
    const rendered = renderMessage(TraceRedirectsResponseSchema, message) as { warnings: { code: string; severity: string }[] };
    expect(rendered.warnings.map((warning) => [warning.code, warning.severity])).toEqual(
      CODES.map((code) => [code, TRACE_WARNING_SEVERITY[code]]),
    );
  });
});
