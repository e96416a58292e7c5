import type { RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { TIMING_PHASES, type TimingPhaseKey } from "../../src/diagnostics/timing-text.js";

/**
 * The phases of one request as the page draws them, which add up to its
 * total (docs/api.md): the API's names without "Ms", e.g. "waiting". Drawn
 * in this order; `other` (checking the target, the step from DNS to the
 * dial) is drawn last, as what is left.
 */
export const PHASES = TIMING_PHASES.map(({ key, label }) => ({ key: key.slice(0, -2) as PhaseKey, label, field: key }));
export type PhaseKey = TimingPhaseKey extends `${infer Name}Ms` ? Name : never;

/**
 * What a request was for. A trace's requests are its hops (a HEAD whose
 * answer sent a GET to the same hop is a request of its own, "head"), then
 * the one that failed, then, when the chain ended on a 2xx page and details
 * were asked for, one extra GET of that page that looked for a client-side
 * redirect.
 */
export type RequestRole = "hop" | "head" | "failed" | "page-read" | "request";

export interface Bar {
  readonly index: number;
  readonly role: RequestRole;
  readonly request: RequestDetail;
  /** Where the request starts on the shared axis. */
  readonly startMs: number;
  readonly totalMs: number;
  readonly segments: readonly { readonly phase: PhaseKey; readonly label: string; readonly ms: number }[];
}

/**
 * Lays the requests on one time axis. The service makes them one after the
 * other and reports each one's duration, not its start, so each bar starts
 * where the previous one ended (the few tenths of a millisecond between two
 * requests are not measured, and not drawn). Starts and totals are summed in
 * tenths of a millisecond, as the service sums them, so the axis ends where
 * the reported time does.
 */
export function barsOf(requests: readonly RequestDetail[], hops?: number): Bar[] {
  let startTenths = 0;
  const roles = rolesOf(requests, hops);
  return requests.map((request, index) => {
    const timings = request.timings;
    const totalMs = Math.max(timings?.totalMs ?? 0, request.failure?.elapsedMs ?? 0);
    const segments = PHASES.map(({ key, label, field }) => ({ phase: key, label, ms: timings?.[field] ?? 0 })).filter(
      (segment) => segment.ms > 0,
    );
    const bar = { index: index + 1, role: roles[index] ?? "request", request, startMs: startTenths / 10, totalMs, segments };
    startTenths += tenths(totalMs);
    return bar;
  });
}

/**
 * The diagnostic's time as its details measured it: the sum of the totals
 * of the requests it counts (all but a trace's extra read of its final
 * page), exact to 0.1 ms; the contract's responseTime and totalTimeMs are
 * this rounded half up.
 */
export function measuredMs(bars: readonly Bar[]): number {
  return bars.filter((bar) => bar.role !== "page-read").reduce((sum, bar) => sum + tenths(bar.totalMs), 0) / 10;
}

function tenths(ms: number): number {
  return Math.round(ms * 10);
}

/** `hops`: the length of a trace's chain; undefined for a site check, whose requests are all alike. */
function rolesOf(requests: readonly RequestDetail[], hops: number | undefined): RequestRole[] {
  let positions = 0;
  return requests.map((request, index) => {
    const replaced = hops !== undefined && request.method === "HEAD" && requests[index + 1]?.headFallback === true;
    if (replaced) return "head";
    positions += 1;
    if (request.failure !== undefined) return "failed";
    if (hops === undefined) return "request";
    return positions <= hops ? "hop" : "page-read";
  });
}

/** The most a label holds before it is cut: what fits LABEL_WIDTH at the label's size. */
const LABEL_CHARACTERS = 23;

/**
 * A bar's label tells it from its neighbours: the origin where it changes from
 * the bar above (its scheme alone when only that changed: "https /old"), else
 * the path (same-origin redirects differ only there), cut in
 * the middle when long so both its start and its end show. The whole URL is
 * in the bar's tooltip.
 */
export function barLabel(bar: Pick<Bar, "index" | "role" | "request">, previousUrl: string | undefined): string {
  if (bar.role === "page-read") return `${bar.index} GET page read`;
  const url = parsedUrl(bar.request.url);
  const previous = previousUrl === undefined ? null : parsedUrl(previousUrl);
  let where: string;
  if (url === null) where = bar.request.url;
  else if (previous !== null && previous.origin === url.origin) where = `${url.pathname}${url.search}`;
  else {
    const path = url.pathname === "/" && url.search === "" ? "" : `${url.pathname}${url.search}`;
    where =
      previous !== null && previous.host === url.host ? `${url.protocol.slice(0, -1)} ${path === "" ? "/" : path}` : `${url.host}${path}`;
  }
  return middleCut(`${bar.index} ${bar.request.method} ${where}`, LABEL_CHARACTERS);
}

function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function middleCut(text: string, most: number): string {
  if (text.length <= most) return text;
  const head = Math.ceil((most - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (most - 1 - head))}`;
}
