import { parseBatch, toCsv } from "./batch-input.js";
import { type BatchRow, csvRowsOf, waitingRow } from "./batch-rows.js";
import { runBatch } from "./batch-service.js";
import type { Credits } from "./credits.js";
import { h } from "./dom.js";
import type { DiagnosticsClient, Operation } from "./service.js";

export interface BatchPanelDeps {
  readonly client: DiagnosticsClient;
  /** The key from the shared field, or undefined after telling the reader it is missing. */
  readonly key: () => string | undefined;
  readonly showCredits: (credits: Credits | undefined) => void;
}

function element<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no #${id}`);
  return found;
}

/**
 * The Batch tab: paste URLs (or `url,expected` CSV), watch the table fill in
 * as results stream in completion order, filter to failures, download CSV.
 */
export function setUpBatchPanel(deps: BatchPanelDeps): void {
  const form = element("batch", HTMLFormElement);
  const input = element("batch-input", HTMLTextAreaElement);
  const stop = element("batch-stop", HTMLButtonElement);
  const status = element("batch-status", HTMLElement);
  const problem = element("batch-problem", HTMLElement);
  const output = element("batch-result", HTMLElement);
  const body = element("batch-rows", HTMLTableSectionElement);
  const failuresOnly = element("batch-failures", HTMLInputElement);
  const download = element("batch-download", HTMLButtonElement);
  const runButtons = [...form.querySelectorAll<HTMLButtonElement>("button[type=submit]")];

  let rows: BatchRow[] = [];
  let lines: HTMLTableRowElement[] = [];
  let running: AbortController | undefined;

  input.addEventListener("keydown", (event) => {
    // Enter is a new line here; Ctrl+Enter (or ⌘+Enter) runs the batch, as in most text areas that submit.
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit(runButtons[0]);
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const operation: Operation = event.submitter instanceof HTMLButtonElement && event.submitter.value === "trace" ? "trace" : "check";
    void run(operation);
  });
  stop.addEventListener("click", () => running?.abort());
  failuresOnly.addEventListener("change", applyFilter);
  download.addEventListener("click", () => {
    const blob = new Blob([toCsv(csvRowsOf(rows))], { type: "text/csv;charset=utf-8" });
    const link = h("a", { href: URL.createObjectURL(blob), download: "sitediag-batch.csv" });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  });

  async function run(operation: Operation): Promise<void> {
    problem.replaceChildren();
    const parsed = parseBatch(input.value);
    if (!parsed.ok) return say(parsed.problem, "");
    const key = deps.key();
    if (key === undefined) return;
    rows = parsed.entries.map((entry, index) => waitingRow(index, entry));
    lines = rows.map((row) => h("tr", { "data-index": row.index }));
    rows.forEach(draw);
    body.replaceChildren(...lines);
    output.hidden = false;
    applyFilter();

    running = new AbortController();
    setRunning(true);
    progress(operation);
    const ended = await runBatch(deps.client, operation, parsed.entries, key, running.signal, {
      credits: deps.showCredits,
      item: (index, finish) => {
        const row = rows[index];
        if (row === undefined) return;
        rows[index] = finish(row);
        draw(rows[index]);
        applyFilter();
        progress(operation);
      },
    });
    const stopped = running.signal.aborted;
    running = undefined;
    setRunning(false);
    if (ended.credits !== undefined) deps.showCredits(ended.credits);
    if (stopped) status.textContent = `Stopped: ${doneCount()} of ${rows.length} done.`;
    else if (ended.problem !== undefined) say(ended.problem.title, ended.problem.detail);
    else status.textContent = `Done: ${rows.length} of ${rows.length}, ${rows.filter((row) => row.failed).length} failed.`;
  }

  function draw(row: BatchRow): void {
    const line = lines[row.index];
    if (line === undefined) return;
    line.className = row.done ? (row.failed ? "failed" : "passed") : "waiting";
    line.replaceChildren(
      ...[String(row.index + 1), row.url, row.outcome, row.finalUrl, row.status, row.expected === "" ? "" : row.expectation || "–"].map((text, column) =>
        h("td", {}, column === 1 || column === 3 ? h("span", { class: "url" }, text) : text),
      ),
    );
  }

  function applyFilter(): void {
    rows.forEach((row, index) => {
      const line = lines[index];
      if (line !== undefined) line.hidden = failuresOnly.checked && !row.failed;
    });
  }

  function doneCount(): number {
    return rows.filter((row) => row.done).length;
  }

  function progress(operation: Operation): void {
    const failed = rows.filter((row) => row.failed).length;
    status.textContent = `${operation === "check" ? "Checking" : "Tracing"}: ${doneCount()} of ${rows.length} done, ${failed} failed.`;
  }

  function setRunning(busy: boolean): void {
    for (const button of runButtons) button.disabled = busy;
    stop.disabled = !busy;
    output.setAttribute("aria-busy", String(busy));
  }

  function say(title: string, detail: string): void {
    problem.replaceChildren(h("div", { class: "problem" }, h("strong", {}, title), detail === "" ? null : h("p", {}, detail)));
  }
}
