import type { VantageDifference, VantageOrigin, VantageSiteChecks, VantageTraces } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { VantageState, VantageVerdict } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { formatWholeMs } from "../../diagnostics/timing-text.js";
import { siteCheckRowWords, traceRowWords, type VantageRowWords } from "../../vantage/vantage-row.js";
import { type VantageVerdictId, verdictTone } from "../../shared/vantage-verdict.js";
import { terminalText } from "./terminal-safe.js";
import { type Paint, textTable } from "./terminal-text.js";

// `sitediag check --vantages` and `trace --vantages` for people: what differs
// between the regions, one row per vantage in the words a single check uses
// (vantage-row.ts), and the verdict over them, read off the very answer the
// API gives, so the table and --json cannot disagree.

/**
 * The table and the verdict line:
 *
 *   differs: addresses (ap-south NXDOMAIN; eu-west, us-east 127.0.0.1), status (ap-south none; eu-west, us-east 200)
 *   VANTAGE   STATE        ANSWER  STATUS  TIME      CODE              REASON
 *   ap-south  done         DOWN    -       40 ms     dns_no_such_host  DNS lookup failed
 *   eu-west   done         UP      200     12 ms
 *   us-east   unavailable  -       -       32000 ms  deadline          This vantage did not answer by the deadline; ...
 *   down_in_some  https://example.test/  (3 vantages: 2 done, 1 unavailable; not seen from us-east)
 */
export function renderVantages(target: string, vantages: VantageSiteChecks | VantageTraces, paint: Paint): string {
  const rows = [["VANTAGE", "STATE", "ANSWER", "STATUS", "TIME", "CODE", "REASON"].map((heading) => paint.dim(heading))];
  const states = new Map<string, number>();
  const silent: string[] = [];
  for (const entry of vantages.entries) {
    const origin = entry.vantage;
    const state = stateName(origin?.state);
    states.set(state, (states.get(state) ?? 0) + 1);
    if (state !== "done") silent.push(clean(origin?.name ?? "?"));
    rows.push(entryRow(entry, origin, state, paint));
  }
  const verdict = VERDICT_IDS[vantages.verdict];
  const tone = verdict === undefined ? "unsure" : verdictTone(verdict);
  const painted = (tone === "good" ? paint.good : tone === "bad" ? paint.bad : paint.warn)(paint.strong(verdict ?? "unknown"));
  const counts = [...states.entries()].map(([state, count]) => `${count} ${state}`).join(", ");
  const count = vantages.entries.length;
  // The regions with nothing to say about the target, named on the verdict's own line: the open question.
  const notSeen = silent.length === 0 ? "" : `; not seen from ${silent.join(", ")}`;
  return `${differencesLine(vantages.differences, paint)}${textTable(rows, "")}${painted}  ${terminalText(target)}  (${count} vantage${count === 1 ? "" : "s"}: ${counts}${notSeen})\n`;
}

/** The warning when the vantages that answered run different builds: the same URL may read apart for that reason alone. */
export function buildsWarning(difference: VantageDifference): string {
  const builds = difference.values.map((value) => `${value.vantages.join(", ")} ${value.value}`).join("; ");
  return clean(`the vantages that answered run different builds (${builds}): their answers may differ for that reason alone`);
}

/** The one line of what differs between the regions that answered, above the rows; nothing when they agree. */
export function differencesLine(differences: readonly VantageDifference[], paint: Paint): string {
  if (differences.length === 0) return "";
  const aspects = differences.map(
    (difference) => `${difference.aspect} (${difference.values.map((value) => `${value.vantages.join(", ")} ${value.value}`).join("; ")})`,
  );
  return `${paint.strong("differs:")} ${clean(aspects.join(", "))}\n`;
}

function entryRow(
  entry: VantageSiteChecks["entries"][number] | VantageTraces["entries"][number],
  origin: VantageOrigin | undefined,
  state: string,
  paint: Paint,
): string[] {
  const name = clean(origin?.name ?? "?");
  const statePainted = state === "done" ? paint.good(state) : paint.warn(state);
  const data = entry.data;
  if (data === undefined)
    return [
      name,
      statePainted,
      "-",
      paint.dim("-"),
      formatWholeMs(origin?.elapsedMs ?? 0),
      clean(origin?.code ?? ""),
      clean(origin?.reason ?? ""),
    ];
  const words: VantageRowWords = "requestedUrl" in data ? siteCheckRowWords(data) : traceRowWords(data);
  const status = "requestedUrl" in data ? data.statusCode : data.finalStatus;
  const time = "requestedUrl" in data ? (data.responseTime ?? origin?.elapsedMs ?? 0) : data.totalTimeMs;
  const word = words.reading === "down" ? paint.bad(words.word) : words.reading === "blocked" ? paint.warn(words.word) : words.word;
  return [
    name,
    statePainted,
    word,
    status === undefined ? paint.dim("-") : paint.status(status, String(status)),
    formatWholeMs(time),
    clean(words.code ?? ""),
    clean(words.reason ?? ""),
  ];
}

const VERDICT_IDS: Readonly<Partial<Record<VantageVerdict, VantageVerdictId>>> = {
  [VantageVerdict.UP_EVERYWHERE]: "up_everywhere",
  [VantageVerdict.DOWN_EVERYWHERE]: "down_everywhere",
  [VantageVerdict.DOWN_IN_SOME]: "down_in_some",
  [VantageVerdict.BLOCKED_IN_SOME]: "blocked_in_some",
  [VantageVerdict.UNAVAILABLE]: "unavailable",
  [VantageVerdict.UP_WHERE_ANSWERED]: "up_where_answered",
  [VantageVerdict.DOWN_WHERE_ANSWERED]: "down_where_answered",
};

/** The verdict's id, as the API spells it. */
export function verdictId(verdict: VantageVerdict): VantageVerdictId | undefined {
  return VERDICT_IDS[verdict];
}

function stateName(state: VantageState | undefined): string {
  return state === VantageState.DONE ? "done" : state === VantageState.REFUSED ? "refused" : "unavailable";
}

/** A cell's text, safe for a terminal: a reason may quote what a target sent, and a terminal obeys escapes. */
function clean(value: string): string {
  return terminalText(value);
}
