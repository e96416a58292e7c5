import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { formatWholeMs } from "../../diagnostics/timing-text.js";
import { type VantageVerdictId, verdictNeedsALook } from "../../vantage/vantage-verdict.js";
import { terminalText } from "./terminal-safe.js";
import { type Paint, textTable } from "./terminal-text.js";

// `sitediag check --vantages` and `trace --vantages` for people: one row per
// vantage and the verdict over them, read off the very `data` object the API
// answers (its `vantages`), so the table and --json cannot disagree.

/**
 * The table and the verdict line:
 *
 *   VANTAGE   STATE        ANSWER  STATUS  TIME      REASON
 *   ap-south  done         down    -       40 ms     DNS lookup failed
 *   eu-west   done         up      200     12 ms
 *   us-east   unavailable  -       -       32000 ms  This vantage did not answer by the deadline; ...
 *   down_in_some  https://example.test/  (3 vantages: 2 done, 1 unavailable)
 */
export function renderVantages(target: string, vantages: JsonObject, kind: "site-check" | "trace", paint: Paint): string {
  const entries = Array.isArray(vantages.entries) ? vantages.entries.filter(isObject) : [];
  const rows = [["VANTAGE", "STATE", "ANSWER", "STATUS", "TIME", "REASON"].map((heading) => paint.dim(heading))];
  const states = new Map<string, number>();
  for (const entry of entries) {
    const vantage = isObject(entry.vantage) ? entry.vantage : {};
    const data = isObject(entry.data) ? entry.data : undefined;
    const state = text(vantage.state);
    states.set(state, (states.get(state) ?? 0) + 1);
    const answer = data === undefined ? "-" : kind === "site-check" ? text(data.status) : text(data.chainStatus);
    const status = data === undefined ? null : kind === "site-check" ? data.statusCode : data.finalStatus;
    const time = data === undefined ? vantage.elapsedMs : kind === "site-check" ? (data.responseTime ?? vantage.elapsedMs) : data.totalTimeMs;
    const reason = data === undefined ? text(vantage.reason) : kind === "site-check" ? text(data.reason) : "";
    rows.push([
      text(vantage.name),
      state === "done" ? paint.good(state) : paint.warn(state),
      answer === "down" || answer === "Request failed" || answer === "Timeout" ? paint.bad(answer) : answer,
      typeof status === "number" ? paint.status(status, String(status)) : paint.dim("-"),
      typeof time === "number" ? formatWholeMs(time) : "-",
      reason,
    ]);
  }
  const verdict = text(vantages.verdict) as VantageVerdictId;
  const painted = verdictNeedsALook(verdict) ? paint.bad(paint.strong(verdict)) : paint.good(paint.strong(verdict));
  const counts = [...states.entries()].map(([state, count]) => `${count} ${state}`).join(", ");
  return `${textTable(rows, "")}${painted}  ${terminalText(target)}  (${entries.length} vantage${entries.length === 1 ? "" : "s"}: ${counts})\n`;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A cell's text, safe for a terminal: a reason may quote what a target sent. */
function text(value: JsonValue | undefined): string {
  return typeof value === "string" ? terminalText(value) : "";
}
