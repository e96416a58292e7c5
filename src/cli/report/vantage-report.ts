import type {
  VantageDifference,
  VantageOrigin,
  VantageSiteChecks,
  VantageTraces,
  VantageVerdict,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { VantageState } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { formatWholeMs } from "../../diagnostics/timing-text.js";
import { siteCheckRowWords, traceRowWords, type VantageRowWords } from "../../vantage/vantage-row.js";
import { type VantageVerdictId, verdictTone } from "../../shared/vantage-verdict.js";
import { VERDICT_VALUES } from "../../shared/vantage-verdict-values.js";
import { terminalText } from "./terminal-safe.js";
import { fixedColumns, type Paint } from "./terminal-text.js";

// `sitediag check --vantages` and `trace --vantages` for people: one row per
// vantage as it answers, in the words a single check uses (vantage-row.ts),
// then what differs between the regions and the verdict over them, read off
// the very messages the API streams, so the rows and --json cannot disagree.
//
//   VANTAGE   STATE        ANSWER      STATUS  TIME      CODE                  REASON
//   eu-west   done         UP          200     12 ms
//   ap-south  done         DOWN        -       40 ms     dns_no_such_host      DNS lookup failed
//   us-east   unavailable  -           -       32000 ms  deadline              This vantage did not answer by the deadline; ...
//   differs: addresses (ap-south NXDOMAIN; eu-west, us-east 127.0.0.1), status (ap-south none; eu-west, us-east 200)
//   down_in_some  https://example.test/  (3 vantages: 2 done, 1 unavailable; not seen from us-east)

/** One vantage's entry, of a check or of a trace. */
export type Entry = VantageSiteChecks["entries"][number] | VantageTraces["entries"][number];

/**
 * The columns' widths, fixed before the first row since the rows come one by
 * one: the name's from the vantages asked, the others' from their longest
 * usual word (unavailable, CHALLENGED, a 5-digit time, a common code); a
 * longer cell pushes its line only. The reason, last, is never padded.
 */
export function vantageColumns(names: readonly string[]): readonly number[] {
  return [Math.max("VANTAGE".length, ...names.map((name) => clean(name).length)), 11, 10, 6, 8, 20];
}

/** The heading of the rows. */
export function vantageHeading(columns: readonly number[], paint: Paint): string {
  return fixedColumns(
    ["VANTAGE", "STATE", "ANSWER", "STATUS", "TIME", "CODE", "REASON"].map((heading) => paint.dim(heading)),
    columns,
  );
}

/** One vantage's row, as it arrives. */
export function vantageRow(entry: Entry, columns: readonly number[], paint: Paint): string {
  return fixedColumns(entryRow(entry, entry.vantage, stateName(entry.vantage?.state), paint), columns);
}

/**
 * What follows the rows: the one line of what differs (computed by the
 * service) and the verdict, with the count of each state and the vantages
 * that said nothing about the target named, the open question. Counted in
 * the order of the vantages' names, as the unary answer lists them.
 */
export function vantageEnding(
  target: string,
  end: { readonly verdict: VantageVerdict; readonly differences: readonly VantageDifference[] },
  entries: readonly Entry[],
  paint: Paint,
): string {
  const states = new Map<string, number>();
  const silent: string[] = [];
  const byName = [...entries].sort((a, b) => compare(a.vantage?.name ?? "", b.vantage?.name ?? ""));
  for (const entry of byName) {
    const state = stateName(entry.vantage?.state);
    states.set(state, (states.get(state) ?? 0) + 1);
    if (state !== "done") silent.push(clean(entry.vantage?.name ?? "?"));
  }
  const verdict = VERDICT_IDS.get(end.verdict);
  const tone = verdict === undefined ? "unsure" : verdictTone(verdict);
  const painted = (tone === "good" ? paint.good : tone === "bad" ? paint.bad : paint.warn)(paint.strong(verdict ?? "unknown"));
  const counts = [...states.entries()].map(([state, count]) => `${count} ${state}`).join(", ");
  const count = entries.length;
  const notSeen = silent.length === 0 ? "" : `; not seen from ${silent.join(", ")}`;
  return `${differencesLine(end.differences, paint)}${painted}  ${terminalText(target)}  (${count} vantage${count === 1 ? "" : "s"}: ${counts}${notSeen})\n`;
}

/**
 * The line a terminal redraws while vantages are out: "waiting for: ap-south
 * (12 s of 32 s)", cut to the terminal's width, as a line that wrapped would
 * leave its first part behind when erased.
 */
export function waitingLine(out: readonly string[], waited: string, width: number, paint: Paint): string {
  const names = out.map(clean).join(", ");
  const line = `waiting for: ${names} (${waited})`;
  if (line.length <= width) return paint.dim(line);
  return paint.dim(`waiting ${waited} for ${out.length} vantages: ${names}`.slice(0, Math.max(0, width - 1)) + "…");
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

function entryRow(entry: Entry, origin: VantageOrigin | undefined, state: string, paint: Paint): string[] {
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

/** The verdicts' ids by their proto values: the inverse of the one table the service answers with. */
const VERDICT_IDS: ReadonlyMap<VantageVerdict, VantageVerdictId> = new Map(
  Object.entries(VERDICT_VALUES).map(([id, value]) => [value, id as VantageVerdictId]),
);

/** The verdict's id, as the API spells it. */
export function verdictId(verdict: VantageVerdict): VantageVerdictId | undefined {
  return VERDICT_IDS.get(verdict);
}

/** A vantage's state as the API spells it; one with none is unavailable. */
export function stateName(state: VantageState | undefined): string {
  return state === VantageState.DONE ? "done" : state === VantageState.REFUSED ? "refused" : "unavailable";
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A cell's text, safe for a terminal: a reason may quote what a target sent, and a terminal obeys escapes. */
function clean(value: string): string {
  return terminalText(value);
}
