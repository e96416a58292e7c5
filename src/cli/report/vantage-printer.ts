import type { VantageDifference, VantagesAsked, VantageVerdict } from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { stillOut, waitedWords } from "../../shared/vantage-arrivals.js";
import type { TextWriter } from "../command.js";
import type { Paint } from "./terminal-text.js";
import { type Entry, vantageColumns, vantageEnding, vantageHeading, vantageRow, waitingLine } from "./vantage-report.js";

// The rows of `--vantages` as the stream brings them: a line per vantage
// when it answers, and the ending (what differs, the verdict) when the
// service's verdict comes. On a terminal, one more line below the rows
// names the vantages still out and the seconds waited against the deadline,
// redrawn every second and erased before each row and at the end; a pipe
// gets the rows line by line and nothing else (no control sequence).

export interface VantagePrinter {
  asked(asked: VantagesAsked): void;
  entry(entry: Entry): void;
  /** The service's verdict: the ending, after the rows. */
  end(target: string, verdict: VantageVerdict, differences: readonly VantageDifference[]): void;
  /** Interrupted or failed: the waiting line goes, the rows printed stay. */
  stop(): void;
}

/** Erases the line the cursor is on and returns to its start. */
const ERASE_LINE = "\r\u001b[2K";

export function startVantagePrinter(out: TextWriter, paint: Paint, now: () => number = () => performance.now()): VantagePrinter {
  const terminal = out.isTTY === true;
  const started = now();
  let asked: VantagesAsked["vantages"] = [];
  let deadlineMs = 0;
  let columns = vantageColumns([]);
  const entries: Entry[] = [];
  let waitingShown = false;
  let clock: ReturnType<typeof setInterval> | undefined;
  const erase = () => {
    if (waitingShown) out.write(ERASE_LINE);
    waitingShown = false;
  };
  const drawWaiting = () => {
    erase();
    const names = stillOut(
      asked,
      entries.map((entry) => entry.vantage?.name ?? ""),
    ).map((vantage) => vantage.name);
    if (names.length === 0) return;
    // A terminal that reports no usable width (a pty nobody sized reports 0) is taken as 80 wide.
    const width = out.columns !== undefined && out.columns >= 20 ? out.columns - 1 : 79;
    out.write(waitingLine(names, waitedWords(now() - started, deadlineMs), width, paint));
    waitingShown = true;
  };
  const stopClock = () => {
    if (clock !== undefined) clearInterval(clock);
    clock = undefined;
    erase();
  };
  return {
    asked(message) {
      asked = message.vantages;
      deadlineMs = message.deadlineMs;
      columns = vantageColumns(asked.map((vantage) => vantage.name));
      if (!terminal || asked.length === 0) return;
      drawWaiting();
      clock = setInterval(drawWaiting, 1_000);
      // The clock must never hold the process open.
      clock.unref();
    },
    entry(entry) {
      erase();
      if (entries.length === 0) out.write(vantageHeading(columns, paint));
      entries.push(entry);
      out.write(vantageRow(entry, columns, paint));
      if (clock !== undefined) drawWaiting();
    },
    end(target, verdict, differences) {
      stopClock();
      if (entries.length > 0) out.write(vantageEnding(target, { verdict, differences }, entries, paint));
    },
    stop: stopClock,
  };
}
