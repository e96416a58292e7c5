import type { VantageDifference, VantageVerdict } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type AskedVantage, stillOut, waitedWords } from "../../src/shared/vantage-arrivals.js";
import { type Entry, entryOf, renderVantages, renderVantagesSoFar } from "./render-vantages.js";
import type { VantageEvent } from "./vantage-service.js";

// The "From every region" answer while it arrives: each region's row when it
// answers, the ones still out waiting (their seconds ticking against the
// deadline), the verdict so far; at the end the service's verdict drawn as
// the unary answer is (renderVantages), or, after Cancel, the regions still
// out marked cancelled.

export interface VantagesLive {
  /** A message of the stream before its end. */
  event(event: VantageEvent): void;
  /** The stream's verdict: the answer, drawn as a unary answer with the same entries is. */
  finish(verdict: VantageVerdict, differences: readonly VantageDifference[]): void;
  /** Cancel: the entries in stay, the regions still out are marked cancelled. */
  cancel(): void;
  /** Stops the clock (a refusal ends the call with nothing to draw). */
  stop(): void;
}

export function startVantagesLive(kind: "check" | "trace", target: string, into: HTMLElement): VantagesLive {
  const started = performance.now();
  let asked: readonly AskedVantage[] = [];
  let deadlineMs = 0;
  const entries: Entry[] = [];
  let drawn = false;
  const out = () =>
    stillOut(
      asked,
      entries.map((entry) => entry.vantage?.name ?? ""),
    );
  const waited = () => waitedWords(performance.now() - started, deadlineMs);
  const draw = (element: HTMLElement) => {
    // A row the reader opened stays open as the others arrive.
    const open = new Set([...into.querySelectorAll("details.vantage[open]")].map((row) => row.getAttribute("data-vantage")));
    into.replaceChildren(element);
    for (const row of into.querySelectorAll("details.vantage"))
      if (open.has(row.getAttribute("data-vantage"))) row.setAttribute("open", "");
    drawn = true;
  };
  const drawSoFar = (cancelled: boolean) => draw(renderVantagesSoFar(kind, { entries, out: out(), waited: waited(), cancelled }, target));
  // Only the seconds change between messages: the rows are left as they are (an opened one, the reader's selection).
  const tick = window.setInterval(() => {
    const text = waited();
    for (const span of into.querySelectorAll(".vantages .waited")) span.textContent = text;
  }, 250);
  return {
    event(event) {
      if (event.kind === "asked") {
        asked = event.asked.vantages;
        deadlineMs = event.asked.deadlineMs;
      } else entries.push(entryOf(kind, event));
      drawSoFar(false);
    },
    finish(verdict, differences) {
      window.clearInterval(tick);
      const byName = [...entries].sort((a, b) => compare(a.vantage?.name ?? "", b.vantage?.name ?? ""));
      draw(renderVantages(kind, { verdict, entries: byName, differences }, target));
    },
    cancel() {
      window.clearInterval(tick);
      // Cancelled before the service named a region: nothing of this call to show, and the last answer is another question's.
      if (drawn) drawSoFar(true);
      else into.replaceChildren();
    },
    stop() {
      window.clearInterval(tick);
    },
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
