import type { RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Bar, barsOf, PHASES, type RequestRole } from "./bars.js";
import { h, svg, table } from "./dom.js";
import { formatMs, hostOf } from "./format.js";

const WIDTH = 800;
const LABEL_WIDTH = 190;
// Room on the right for the last tick's label.
const RIGHT_MARGIN = 36;
const ROW = 26;
const BAR_HEIGHT = 16;
const AXIS = 24;

const ROLE_NOTES: Readonly<Record<RequestRole, string | undefined>> = {
  hop: undefined,
  request: undefined,
  failed: undefined,
  "page-read": "read the final page for a client-side redirect",
};

/**
 * One bar per request split into its phases, on a shared axis, with a legend
 * and the numbers in a table. `hops`: a trace's chain length, so its hops are
 * told apart from the extra read of the final page.
 */
export function renderWaterfall(requests: readonly RequestDetail[], hops?: number): HTMLElement {
  const bars = barsOf(requests, hops);
  const endMs = Math.max(1, ...bars.map((bar) => bar.startMs + bar.totalMs));
  const step = tickStep(endMs);
  const scale = (WIDTH - LABEL_WIDTH - RIGHT_MARGIN) / (Math.ceil(endMs / step) * step);
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
        svg("text", { x, y: AXIS - 10, "text-anchor": "middle" }, tickLabel(ms, step)),
      );
    }),
    ...bars.map((bar, row) => {
      const y = AXIS + row * ROW + (ROW - BAR_HEIGHT) / 2;
      let x = LABEL_WIDTH + bar.startMs * scale;
      const failed = bar.request.failure;
      const label = bar.role === "page-read" ? `${bar.index} GET page read` : `${bar.index} ${bar.request.method} ${hostOf(bar.request.url)}`;
      return svg(
        "g",
        { class: `bar ${bar.role}`, "data-request": bar.index },
        svg("title", {}, barSummary(bar)),
        svg("text", { class: "bar-label", x: 4, y: y + BAR_HEIGHT - 4 }, label.length > 25 ? `${label.slice(0, 24)}…` : label),
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
        h(
          "span",
          {},
          h("span", { class: "url" }, `${request.method}${request.headFallback ? " (after HEAD)" : ""} ${request.url}`),
          ROLE_NOTES[bar.role] === undefined ? null : h("small", { class: "role-note" }, ` (${ROLE_NOTES[bar.role] ?? ""})`),
        ),
        request.status ?? (request.failure === undefined ? "" : `failed at ${request.failure.stage}: ${request.failure.reason}`),
        msOrDash(t?.dnsMs),
        // The redirect before it kept its connection: no dial to show, and saying so beats a dash.
        request.connectionReused ? "reused" : msOrDash(t?.connectMs),
        msOrDash(t?.tlsMs),
        msOrDash(t?.firstByteMs),
        formatMs(bar.totalMs),
        request.remoteAddress ?? "–",
        request.httpVersion ?? "–",
      ];
    }),
    "timings",
  );

  return h("figure", { class: "waterfall-figure" }, h("figcaption", {}, "Waterfall"), h("div", { class: "chart-scroll" }, chart), legend, numbers);
}

function barSummary(bar: Bar): string {
  const parts = bar.segments.map((segment) => `${segment.label} ${formatMs(segment.ms)}`);
  const note = ROLE_NOTES[bar.role] === undefined ? "" : `, to ${ROLE_NOTES[bar.role] ?? ""}`;
  const reused = bar.request.connectionReused ? ", on the previous request's connection" : "";
  return `Request ${bar.index}: ${bar.request.method} ${bar.request.url}${note}${reused}, ${formatMs(bar.totalMs)} (${parts.join(", ")})`;
}

/** Tick labels as round as their step: "0", "20 ms", "2.5 ms", "1.5 s". */
function tickLabel(ms: number, step: number): string {
  if (ms === 0) return "0";
  if (step >= 1000) return `${ms / 1000} s`;
  return `${Number(ms.toFixed(step < 1 ? 2 : 0))} ms`;
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
