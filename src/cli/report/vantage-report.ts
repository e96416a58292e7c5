import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { formatWholeMs } from "../../diagnostics/timing-text.js";
import { type VantageVerdictId, verdictTone } from "../../vantage/vantage-verdict.js";
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
  const silent: string[] = [];
  for (const entry of entries) {
    const vantage = isObject(entry.vantage) ? entry.vantage : {};
    const data = isObject(entry.data) ? entry.data : undefined;
    const state = text(vantage.state);
    states.set(state, (states.get(state) ?? 0) + 1);
    if (state !== "done") silent.push(text(vantage.name));
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
  const tone = verdictTone(verdict);
  const painted = (tone === "good" ? paint.good : tone === "bad" ? paint.bad : paint.warn)(paint.strong(verdict));
  const counts = [...states.entries()].map(([state, count]) => `${count} ${state}`).join(", ");
  // The regions with nothing to say about the target, named on the verdict's own line: the open question.
  const notSeen = silent.length === 0 ? "" : `; not seen from ${silent.join(", ")}`;
  return `${textTable(rows, "")}${painted}  ${clean(target)}  (${entries.length} vantage${entries.length === 1 ? "" : "s"}: ${counts}${notSeen})\n`;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A cell's text, control characters shown as '?': a reason may quote what a target sent, and a terminal obeys escapes. */
function text(value: JsonValue | undefined): string {
  return typeof value === "string" ? clean(value) : "";
}

function clean(value: string): string {
  let out = "";
  for (const char of value) {
    const code = char.charCodeAt(0);
    out += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? "?" : char;
  }
  return out;
}
