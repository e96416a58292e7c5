import type { RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { h, svg, table } from "./dom.js";
import { formatMs, hostOf } from "./format.js";

/** The phases of one request, in the order they happen. "wait" is what no phase accounts for (writing the request, the pool). */
const PHASES = [
  { key: "dns", label: "DNS" },
  { key: "connect", label: "Connect" },
  { key: "tls", label: "TLS" },
  { key: "wait", label: "Other" },
  { key: "firstByte", label: "First byte" },
] as const;
type PhaseKey = (typeof PHASES)[number]["key"];

interface Bar {
  readonly index: number;
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
 * requests are not measured, and not drawn).
 */
export function barsOf(requests: readonly RequestDetail[]): Bar[] {
  let start = 0;
  return requests.map((request, index) => {
    const timings = request.timings;
    const totalMs = Math.max(timings?.totalMs ?? 0, request.failure?.elapsedMs ?? 0);
    const measured: Record<Exclude<PhaseKey, "wait">, number | undefined> = {
      dns: timings?.dnsMs,
      connect: timings?.connectMs,
      tls: timings?.tlsMs,
      firstByte: timings?.firstByteMs,
    };
    const known = Object.values(measured).reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
    const wait = Math.max(0, totalMs - known);
    const segments = PHASES.map(({ key, label }) => ({ phase: key, label, ms: key === "wait" ? wait : (measured[key] ?? 0) })).filter((segment) => segment.ms > 0);
    const bar = { index: index + 1, request, startMs: start, totalMs, segments };
    start += totalMs;
    return bar;
  });
}

const WIDTH = 800;
const LABEL_WIDTH = 150;
const ROW = 26;
const BAR_HEIGHT = 16;
const AXIS = 24;

/** One bar per request split into its phases, on a shared axis, with a legend and the numbers in a table. */
export function renderWaterfall(requests: readonly RequestDetail[]): HTMLElement {
  const bars = barsOf(requests);
  const endMs = Math.max(1, ...bars.map((bar) => bar.startMs + bar.totalMs));
  const step = tickStep(endMs);
  const scale = (WIDTH - LABEL_WIDTH - 10) / (Math.ceil(endMs / step) * step);
  const height = AXIS + bars.length * ROW + 4;
  const titleId = `waterfall-title-${Math.random().toString(36).slice(2, 8)}`;

  const chart = svg(
    "svg",
    { class: "waterfall", viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "aria-labelledby": titleId, preserveAspectRatio: "xMinYMin meet" },
    svg("title", { id: titleId }, `Waterfall of ${bars.length} request${bars.length === 1 ? "" : "s"}, ${formatMs(endMs)} in all`),
    ...ticks(endMs, step).map((ms) => {
      const x = LABEL_WIDTH + ms * scale;
      return svg(
        "g",
        { class: "tick" },
        svg("line", { x1: x, x2: x, y1: AXIS - 6, y2: height }),
        svg("text", { x, y: AXIS - 10, "text-anchor": "middle" }, formatMs(ms)),
      );
    }),
    ...bars.map((bar, row) => {
      const y = AXIS + row * ROW + (ROW - BAR_HEIGHT) / 2;
      let x = LABEL_WIDTH + bar.startMs * scale;
      const failed = bar.request.failure;
      const label = `${bar.index} ${bar.request.method} ${hostOf(bar.request.url)}`;
      return svg(
        "g",
        { class: failed === undefined ? "bar" : "bar failed", "data-request": bar.index },
        svg("title", {}, barSummary(bar)),
        svg("text", { class: "bar-label", x: 4, y: y + BAR_HEIGHT - 4 }, label.length > 24 ? `${label.slice(0, 23)}…` : label),
        ...bar.segments.map((segment) => {
          const width = Math.max(1, segment.ms * scale);
          const rect = svg(
            "rect",
            { class: `phase phase-${segment.phase}`, x, y, width, height: BAR_HEIGHT },
            svg("title", {}, `Request ${bar.index}, ${segment.label}: ${formatMs(segment.ms)}`),
          );
          x += segment.ms * scale;
          return rect;
        }),
        failed === undefined ? null : svg("rect", { class: "phase phase-failed", x: x - 2, y: y - 2, width: 4, height: BAR_HEIGHT + 4 }, svg("title", {}, `Request ${bar.index} failed: ${failed.reason}`)),
      );
    }),
  );

  const legend = h(
    "ul",
    { class: "legend", "aria-label": "Phases" },
    ...PHASES.map(({ key, label }) => h("li", {}, h("span", { class: `swatch phase-${key}`, "aria-hidden": "true" }), label)),
    h("li", {}, h("span", { class: "swatch phase-failed", "aria-hidden": "true" }), "Failure"),
  );

  const numbers = table(
    "Timings of each request",
    ["#", "Request", "Status", "DNS", "Connect", "TLS", "First byte", "Total", "Address", "HTTP"],
    bars.map((bar) => {
      const { request } = bar;
      const t = request.timings;
      return [
        bar.index,
        h("span", { class: "url" }, `${request.method}${request.headFallback ? " (after HEAD)" : ""} ${request.url}`),
        request.status ?? (request.failure === undefined ? "" : `failed at ${request.failure.stage}: ${request.failure.reason}`),
        msOrDash(t?.dnsMs),
        msOrDash(t?.connectMs),
        msOrDash(t?.tlsMs),
        msOrDash(t?.firstByteMs),
        formatMs(bar.totalMs),
        request.remoteAddress ?? "–",
        request.httpVersion ?? "–",
      ];
    }),
    "timings",
  );

  return h("figure", { class: "waterfall-figure" }, h("figcaption", {}, "Waterfall"), chart, legend, numbers);
}

function barSummary(bar: Bar): string {
  const parts = bar.segments.map((segment) => `${segment.label} ${formatMs(segment.ms)}`);
  return `Request ${bar.index}: ${bar.request.method} ${bar.request.url}, ${formatMs(bar.totalMs)} (${parts.join(", ")})`;
}

function msOrDash(ms: number | undefined): string {
  return ms === undefined ? "–" : formatMs(ms);
}

/** A round step (1, 2 or 5 times a power of ten) giving at most six ticks. */
function tickStep(endMs: number): number {
  const rough = endMs / 6;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? 10 * power;
}

function ticks(endMs: number, step: number): number[] {
  const count = Math.ceil(endMs / step);
  return Array.from({ length: count + 1 }, (_, i) => i * step);
}
