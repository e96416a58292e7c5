import type { RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { failureStory } from "../../src/diagnostics/timing-text.js";
import { type Bar, barLabel, barsOf, measuredMs, PHASES, type RequestRole } from "./bars.js";
import { h, svg, table } from "./dom.js";
import { formatMs } from "./format.js";

const WIDTH = 800;
const LABEL_WIDTH = 190;
// Room on the right for the last tick's label.
const RIGHT_MARGIN = 36;
const ROW = 26;
const BAR_HEIGHT = 16;
const AXIS = 24;

const ROLE_NOTES: Readonly<Record<RequestRole, string | undefined>> = {
  hop: undefined,
  head: "HEAD, answered before the GET sent in its place",
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
  // A trace's time ends before the extra read of its final page: marked where it ends, on the same axis.
  const chainEndMs = bars.some((bar) => bar.role === "page-read") ? measuredMs(bars) : null;
  const step = tickStep(endMs);
  const scale = (WIDTH - LABEL_WIDTH - RIGHT_MARGIN) / (Math.ceil(endMs / step) * step);
  const height = AXIS + bars.length * ROW + 4;
  const titleId = `waterfall-title-${Math.random().toString(36).slice(2, 8)}`;

  const chart = svg(
    "svg",
    {
      class: "waterfall",
      viewBox: `0 0 ${WIDTH} ${height}`,
      role: "img",
      "aria-labelledby": titleId,
      preserveAspectRatio: "xMinYMin meet",
    },
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
    chainEndMs === null ? null : chainEnd(LABEL_WIDTH + chainEndMs * scale, height, chainEndMs),
    ...bars.map((bar, row) => {
      const y = AXIS + row * ROW + (ROW - BAR_HEIGHT) / 2;
      let x = LABEL_WIDTH + bar.startMs * scale;
      const failed = bar.request.failure;
      const label = barLabel(bar, bars[row - 1]?.request.url);
      return svg(
        "g",
        { class: `bar ${bar.role}`, "data-request": bar.index },
        svg("title", {}, barSummary(bar)),
        svg("text", { class: "bar-label", x: 4, y: y + BAR_HEIGHT - 4 }, label),
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
        failed === undefined
          ? null
          : svg(
              "rect",
              { class: "phase phase-failed", x: x - 2, y: y - 2, width: 4, height: BAR_HEIGHT + 4 },
              svg("title", {}, `Request ${bar.index} failed: ${failed.reason}`),
            ),
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
    ["#", "Request", "Status", ...PHASES.map(({ label }) => label), "Total", "Address", "HTTP"],
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
        request.status ??
          (request.failure === undefined ? "" : `${request.failure.timedOut ? "timed out" : "failed"} at ${request.failure.stage}`),
        // The redirect before it kept its connection: no dial to show, and saying so beats a dash.
        ...PHASES.map(({ key, field }) => (key === "connect" && request.connectionReused ? "reused" : msOrDash(t?.[field]))),
        formatMs(bar.totalMs),
        request.remoteAddress ?? "–",
        request.httpVersion ?? "–",
      ];
    }),
    "timings",
  );

  return h(
    "figure",
    { class: "waterfall-figure" },
    h("figcaption", {}, "Waterfall"),
    h("div", { class: "chart-scroll" }, chart),
    legend,
    failureStories(bars),
    numbers,
  );
}

/** How far each failed request got, in words, under the chart: "Request 1: connected in 0.8 ms, then no response in 6000.1 ms. Timed out ...". */
function failureStories(bars: readonly Bar[]): HTMLElement | null {
  const failed = bars.filter((bar) => bar.request.failure !== undefined);
  if (failed.length === 0) return null;
  return h(
    "ul",
    { class: "request-stories" },
    ...failed.map(({ index, request }) => {
      const failure = request.failure;
      const story =
        failure === undefined || request.timings === undefined
          ? ""
          : `${failureStory(failure, request.timings, request.connectionReused)}. `;
      return h("li", {}, h("strong", {}, `Request ${index}: `), `${story}${failure?.reason ?? ""}`);
    }),
  );
}

/** The line where a trace's own time ends, with its figure: the requests after it are the extra read of the final page. */
function chainEnd(x: number, height: number, ms: number): SVGElement {
  return svg(
    "g",
    { class: "chain-end" },
    svg("title", {}, `The trace's total time, ${formatMs(ms)}, ends here; the read of the final page comes after it`),
    svg("line", { x1: x, x2: x, y1: AXIS - 4, y2: height }),
  );
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
