import {
  type CheckSiteResponse,
  type TraceRedirectsResponse,
  type VantageDifference,
  type VantageOrigin,
  VantageState,
  VantageVerdict,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { siteCheckRowWords, traceRowWords, type VantageRowWords } from "../../src/vantage/vantage-row.js";
import { type VantageVerdictId, verdictTone } from "../../src/shared/vantage-verdict.js";
import { type AskedVantage, verdictSoFar } from "../../src/shared/vantage-arrivals.js";
import { VERDICT_VALUES } from "../../src/shared/vantage-verdict-values.js";
import { CHAIN_STATUS_TEXT } from "./chain-status.js";
import { h } from "./dom.js";
import { formatWholeMs } from "./format.js";
import { renderCheck } from "./render-check.js";
import { renderTrace } from "./render-trace.js";

// "From every region": the verdict over the vantages on top, then one row per
// vantage (its verdict, status, time and reason) that opens to the answer
// from there, drawn as a single answer is (its chain and waterfall). Each
// row's word is read by the one rule of src/shared/vantage-verdict.ts.

const VERDICT: Readonly<Record<VantageVerdict, { readonly id: VantageVerdictId | "unknown"; readonly words: string }>> = {
  [VantageVerdict.UNSPECIFIED]: { id: "unknown", words: "No verdict" },
  [VantageVerdict.UP_EVERYWHERE]: { id: "up_everywhere", words: "Up everywhere" },
  [VantageVerdict.DOWN_EVERYWHERE]: { id: "down_everywhere", words: "Down everywhere" },
  [VantageVerdict.DOWN_IN_SOME]: { id: "down_in_some", words: "Down in some regions" },
  [VantageVerdict.BLOCKED_IN_SOME]: { id: "blocked_in_some", words: "Blocked in some regions" },
  [VantageVerdict.UNAVAILABLE]: { id: "unavailable", words: "No region answered" },
  [VantageVerdict.UP_WHERE_ANSWERED]: { id: "up_where_answered", words: "Up where answered" },
  [VantageVerdict.DOWN_WHERE_ANSWERED]: { id: "down_where_answered", words: "Down where answered" },
};

/** The verdict box's class by the rule's tone: green only for up everywhere, amber where the picture is not whole. */
const TONE_CLASS = { good: "up", bad: "down", unsure: "gated" } as const;

/** The verdict in words, lower case, for the status line ("down in some regions"). */
export function vantagesSummary(verdict: VantageVerdict): string {
  return VERDICT[verdict].words.toLowerCase();
}

/** One vantage's part as the page draws it: its origin, and its answer when it has one. */
export type Entry = { readonly vantage: VantageOrigin | undefined } & (
  | { readonly kind: "check"; readonly data: CheckSiteResponse | undefined }
  | { readonly kind: "trace"; readonly data: TraceRedirectsResponse | undefined }
);

/** An entry as the streams and the unary answer carry it, typed by the operation. */
export function entryOf(
  kind: "check" | "trace",
  entry: { readonly vantage?: VantageOrigin | undefined; readonly data?: CheckSiteResponse | TraceRedirectsResponse | undefined },
): Entry {
  return kind === "check"
    ? { kind, vantage: entry.vantage, data: entry.data as CheckSiteResponse | undefined }
    : { kind, vantage: entry.vantage, data: entry.data as TraceRedirectsResponse | undefined };
}

/** An answer from several vantages: `vantages` of a CheckSite or TraceRedirects response, or a stream's entries and its verdict. */
export function renderVantages(
  kind: "check" | "trace",
  answer: {
    readonly verdict: VantageVerdict;
    readonly entries: readonly {
      readonly vantage?: VantageOrigin | undefined;
      readonly data?: CheckSiteResponse | TraceRedirectsResponse | undefined;
    }[];
    readonly differences: readonly VantageDifference[];
  },
  target: string,
): HTMLElement {
  const verdict = VERDICT[answer.verdict];
  const tone = verdict.id === "unknown" ? "gated" : TONE_CLASS[verdictTone(verdict.id)];
  const entries = answer.entries.map((entry) => entryOf(kind, entry));
  const answered = entries.filter((entry) => entry.data !== undefined).length;
  return h(
    "article",
    { class: "vantages" },
    heading(kind),
    h(
      "div",
      { class: `verdict ${tone}`, "data-verdict": verdict.id },
      h("span", { class: "verdict-word" }, verdict.words),
      h("p", { class: "reason" }, `${target}: ${answered} of ${entries.length} region${entries.length === 1 ? "" : "s"} answered`),
      silentLine(entries),
    ),
    buildsWarning(answer.differences),
    differencesLine(answer.differences),
    h("div", { class: "vantage-rows" }, ...entries.map(vantageRow)),
  );
}

/**
 * The same while the entries arrive: the verdict so far (provisional,
 * never green while a region is out: shared/vantage-arrivals.ts), and one row
 * per vantage asked in the order of their names, those still out waiting
 * (the seconds in `.waited`, which the caller ticks) or, after Cancel,
 * cancelled. The service's verdict replaces it all (renderVantages).
 */
export function renderVantagesSoFar(
  kind: "check" | "trace",
  soFar: {
    readonly entries: readonly Entry[];
    readonly out: readonly AskedVantage[];
    readonly waited: string;
    readonly cancelled: boolean;
  },
  target: string,
): HTMLElement {
  const readings = soFar.entries.map((entry) => wordsOf(entry)?.reading);
  const id = verdictSoFar(readings, soFar.out.length);
  const verdictWords = soFar.cancelled
    ? "Cancelled"
    : id === "waiting"
      ? "Waiting for the regions"
      : `${VERDICT[VERDICT_VALUES[id]].words} so far`;
  const tone = soFar.cancelled || id === "waiting" ? "gated" : TONE_CLASS[verdictTone(id)];
  const total = soFar.entries.length + soFar.out.length;
  const answered = soFar.entries.filter((entry) => entry.data !== undefined).length;
  const rows = [
    ...soFar.entries.map((entry) => ({ name: entry.vantage?.name ?? "", row: vantageRow(entry) })),
    ...soFar.out.map((vantage) => ({ name: vantage.name, row: outRow(vantage, soFar.waited, soFar.cancelled) })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out = soFar.out.map((vantage) => vantage.label ?? vantage.name).join(", ");
  return h(
    "article",
    { class: "vantages" },
    heading(kind),
    h(
      "div",
      { class: `verdict ${tone} provisional`, "data-verdict": soFar.cancelled ? "cancelled" : id },
      h("span", { class: "verdict-word" }, verdictWords),
      h(
        "p",
        { class: "reason" },
        `${target}: ${answered} of ${total} region${total === 1 ? "" : "s"} answered${soFar.cancelled ? " before Cancel" : " so far"}`,
      ),
      silentLine(soFar.entries),
      soFar.out.length === 0
        ? null
        : soFar.cancelled
          ? h("p", { class: "silent" }, `Cancelled before: ${out}`)
          : h("p", { class: "waiting-for" }, `Waiting for: ${out} (`, h("span", { class: "waited" }, soFar.waited), ")"),
    ),
    h("div", { class: "vantage-rows" }, ...rows.map((item) => item.row)),
  );
}

function heading(kind: "check" | "trace"): HTMLElement {
  return h("h2", {}, kind === "check" ? "Is it down, from every region?" : "Where does it redirect, from every region?");
}

/** A region asked that has not answered: how long it has been waited for and the deadline, or that Cancel came first. */
function outRow(vantage: AskedVantage, waited: string, cancelled: boolean): HTMLElement {
  const summary = h(
    "summary",
    {},
    h("span", { class: "vantage-word waiting" }, cancelled ? "CANCELLED" : "WAITING"),
    h(
      "span",
      { class: "vantage-name" },
      vantage.label ?? vantage.name,
      vantage.location === undefined ? null : h("span", { class: "vantage-location" }, ` ${vantage.location}`),
    ),
    h("span", { class: "vantage-status" }, "–"),
    h("span", { class: "vantage-time" }, "–"),
    cancelled
      ? h("span", { class: "vantage-reason" }, "Cancelled before this region answered")
      : h("span", { class: "vantage-reason" }, "Waiting ", h("span", { class: "waited" }, waited), "; unavailable if not in by then"),
  );
  const note = cancelled
    ? "The call was cancelled before this region answered: nothing is known about the target from there."
    : "No answer from this region yet. A region that has not answered by the deadline is unavailable, never down.";
  return h(
    "details",
    { class: `vantage ${cancelled ? "cancelled" : "waiting"}`, "data-vantage": vantage.name },
    summary,
    h("div", { class: "vantage-body" }, h("p", { class: "note" }, note)),
  );
}

function vantageRow(entry: Entry): HTMLElement {
  const origin = entry.vantage;
  const name = origin?.label ?? origin?.name ?? "?";
  const words = wordsOf(entry);
  const word = words === undefined ? stateWord(origin?.state) : words.word;
  const status =
    entry.data === undefined
      ? "–"
      : entry.kind === "check"
        ? String(entry.data.statusCode ?? "–")
        : `${CHAIN_STATUS_TEXT[entry.data.chainStatus]}, ${entry.data.finalStatus ?? "–"}`;
  const time =
    entry.data === undefined
      ? formatWholeMs(origin?.elapsedMs ?? 0)
      : formatWholeMs(entry.kind === "check" ? (entry.data.responseTime ?? origin?.elapsedMs ?? 0) : entry.data.totalTimeMs);
  // The same words as a single answer: the reason, and its code beside it.
  const reason = words === undefined ? (origin?.reason ?? "") : (words.reason ?? "");
  const code = words === undefined ? (origin?.code ?? null) : words.code;
  const summary = h(
    "summary",
    {},
    h("span", { class: `vantage-word ${words?.reading ?? "none"}` }, word),
    h(
      "span",
      { class: "vantage-name" },
      name,
      origin?.location === undefined ? null : h("span", { class: "vantage-location" }, ` ${origin.location}`),
    ),
    h("span", { class: "vantage-status" }, status),
    h("span", { class: "vantage-time" }, time),
    h("span", { class: "vantage-reason" }, reason, code === null ? null : h("code", { class: "vantage-code" }, code)),
  );
  const body =
    entry.data === undefined
      ? h("p", { class: "note" }, origin?.reason ?? "No answer from this region.")
      : entry.kind === "check"
        ? renderCheck(entry.data)
        : renderTrace(entry.data);
  return h("details", { class: "vantage", "data-vantage": origin?.name ?? "" }, summary, h("div", { class: "vantage-body" }, body));
}

/** What differs between the regions that answered, computed by the service: one line above the rows. */
function differencesLine(differences: readonly VantageDifference[]): HTMLElement | null {
  if (differences.length === 0) return null;
  const parts = differences.map(
    (difference) =>
      `${ASPECT_WORDS[difference.aspect] ?? difference.aspect}: ${difference.values.map((value) => `${value.vantages.join(", ")} ${value.value}`).join("; ")}`,
  );
  return h("p", { class: "differences" }, h("strong", {}, "What differs: "), parts.join(" · "));
}

/** Regions on different builds can read the same URL apart: said plainly, above what differs. */
function buildsWarning(differences: readonly VantageDifference[]): HTMLElement | null {
  const builds = differences.find((difference) => difference.aspect === "version");
  if (builds === undefined) return null;
  const which = builds.values.map((value) => `${value.vantages.join(", ")} ${value.value}`).join("; ");
  return h(
    "p",
    { class: "builds warning" },
    `The regions that answered run different builds (${which}): their answers may differ for that reason alone.`,
  );
}

const ASPECT_WORDS: Readonly<Record<string, string>> = {
  addresses: "addresses",
  resolver: "resolver",
  status: "status",
  final_url: "final URL",
  certificate: "certificate",
  failed_stage: "failed stage",
  chain_status: "chain status",
  version: "build",
};

/** The regions that said nothing about the target, named: the open question of the answer. */
function silentLine(entries: readonly Entry[]): HTMLElement | null {
  const silent = entries
    .filter((entry) => entry.data === undefined)
    .map(
      (entry) =>
        `${entry.vantage?.label ?? entry.vantage?.name ?? "?"} (${entry.vantage?.state === VantageState.REFUSED ? "refused" : "no answer"})`,
    );
  if (silent.length === 0) return null;
  return h("p", { class: "silent" }, `Not seen from: ${silent.join(", ")}`);
}

function wordsOf(entry: Entry): VantageRowWords | undefined {
  if (entry.data === undefined) return undefined;
  return entry.kind === "check" ? siteCheckRowWords(entry.data) : traceRowWords(entry.data);
}

function stateWord(state: VantageState | undefined): string {
  return state === VantageState.REFUSED ? "REFUSED" : "UNAVAILABLE";
}
