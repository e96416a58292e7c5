import { redirectLimit } from "../../src/shared/batch.js";
import { failureCountText } from "../../src/shared/batch-verdict.js";
import { overBudgetWords, rowsThatFit } from "./batch-budget.js";
import { parseBatch } from "./batch-input.js";
import { type BatchRow, csvOf, notRunRow, runsAgain, waitingRow } from "./batch-rows.js";
import { readCredits, runBatch } from "./batch-service.js";
import { batchCostText, type Credits, latestCredits } from "./credits.js";
import { type Child, h } from "./dom.js";
import { renderCheck } from "./render-check.js";
import { renderTrace } from "./render-trace.js";
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

/** The table's columns; a row opened to its answer spans them all. */
const COLUMNS = 7;

/**
 * The Batch tab: paste URLs (or `url,expected` CSV), see what the batch
 * costs against the credits the last answer reported, watch the table fill
 * in as results stream in completion order, each row PASS or FAIL with its
 * reason and code (src/shared/batch-verdict.ts, the CLI's rule too) and opening to
 * its chain and waterfall; filter to failures, re-run only the rows that
 * need a look, download CSV. Rows a refusal or Stop left behind say NOT RUN.
 */
export function setUpBatchPanel(deps: BatchPanelDeps): void {
  const form = element("batch", HTMLFormElement);
  const input = element("batch-input", HTMLTextAreaElement);
  const cost = element("batch-cost", HTMLElement);
  const stop = element("batch-stop", HTMLButtonElement);
  const status = element("batch-status", HTMLElement);
  const problem = element("batch-problem", HTMLElement);
  const output = element("batch-result", HTMLElement);
  const body = element("batch-rows", HTMLTableSectionElement);
  const failuresOnly = element("batch-failures", HTMLInputElement);
  const rerun = element("batch-rerun", HTMLButtonElement);
  const includeRefused = element("batch-include-refused", HTMLInputElement);
  const limitInput = element("batch-max-redirects", HTMLInputElement);
  const offer = element("batch-offer", HTMLElement);
  const summary = element("batch-summary", HTMLElement);
  const download = element("batch-download", HTMLButtonElement);
  const userAgent = element("batch-user-agent", HTMLSelectElement);
  const runButtons = [...form.querySelectorAll<HTMLButtonElement>("button[type=submit]")];

  let rows: BatchRow[] = [];
  let lines: HTMLTableRowElement[] = [];
  let opened: { readonly index: number; readonly line: HTMLTableRowElement } | undefined;
  let lastOperation: Operation = "check";
  let running: AbortController | undefined;

  input.addEventListener("keydown", (event) => {
    // Enter is a new line here; Ctrl+Enter (or ⌘+Enter) runs the batch, as in most text areas that submit.
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit(runButtons[0]);
    }
  });
  // The credits may have changed in the other tab since: the cost is weighed again whenever the list is looked at.
  input.addEventListener("input", showCost);
  input.addEventListener("focus", showCost);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const operation: Operation = event.submitter instanceof HTMLButtonElement && event.submitter.value === "trace" ? "trace" : "check";
    void start(operation);
  });
  stop.addEventListener("click", () => running?.abort());
  failuresOnly.addEventListener("change", applyFilter);
  includeRefused.addEventListener("change", applyFilter);
  rerun.addEventListener("click", () => {
    // A row refused at input (not a URL, a private address) cannot run as written: left out unless asked.
    const again = rows.filter((row) => runsAgain(row, includeRefused.checked)).map((row) => row.index);
    if (again.length > 0) void run(lastOperation, again);
  });
  download.addEventListener("click", () => {
    const blob = new Blob([csvOf(rows)], { type: "text/csv;charset=utf-8" });
    const link = h("a", { href: URL.createObjectURL(blob), download: "sitediag-batch.csv" });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  });

  function showCost(): void {
    const parsed = parseBatch(input.value);
    cost.textContent = parsed.ok ? batchCostText(parsed.entries.length, latestCredits()) : "";
  }

  async function start(operation: Operation): Promise<void> {
    problem.replaceChildren();
    summary.textContent = "";
    const parsed = parseBatch(input.value);
    if (!parsed.ok) return say(parsed.problem, "");
    if (deps.key() === undefined) return;
    rows = parsed.entries.map((entry, index) => waitingRow(index, entry));
    lines = rows.map((row) => h("tr", { "data-index": row.index }));
    opened = undefined;
    body.replaceChildren(...lines);
    output.hidden = false;
    await run(
      operation,
      rows.map((row) => row.index),
    );
  }

  /**
   * Runs the rows at `indexes` (all of them, the ones a re-run takes again, or
   * the first that fit); the others keep what they have. Before anything is
   * sent, what the key has left is read for free: a batch that does not fit
   * is not sent (it would be refused whole), its rows say NOT RUN, over the
   * budget, and the first rows that fit are offered.
   */
  async function run(operation: Operation, indexes: readonly number[]): Promise<void> {
    const key = deps.key();
    if (key === undefined) return;
    problem.replaceChildren();
    hideOffer();
    const limit = operation === "trace" ? batchLimit() : undefined;
    if (limit === null) return say("Max redirects is a whole number from 0 to 20.", "");
    lastOperation = operation;
    for (const index of indexes) update(index, (row) => waitingRow(row.index, row.entry));
    if (opened !== undefined && indexes.includes(opened.index)) close();
    applyFilter();

    running = new AbortController();
    setRunning(true);
    status.textContent = "Reading the key's credits…";
    const credits = await readCredits(key, running.signal);
    if (credits !== undefined) deps.showCredits(credits);
    const fits = rowsThatFit(operation, indexes.length, credits);
    if (fits < indexes.length && !running.signal.aborted && credits !== undefined) {
      running = undefined;
      return overBudget(operation, indexes, fits, credits);
    }
    progress(operation, indexes);
    const entries = indexes.flatMap((index) => rows[index]?.entry ?? []);
    const ended = await runBatch(
      deps.client,
      operation,
      entries,
      key,
      running.signal,
      {
        credits: deps.showCredits,
        // The stream numbers the items it was sent; a re-run sent only some rows.
        item: (sent, finish) => {
          const index = indexes[sent];
          if (index === undefined) return;
          update(index, finish);
          progress(operation, indexes);
        },
      },
      userAgent.value,
      limit,
    );
    const stopped = running.signal.aborted;
    running = undefined;
    const arrived = indexes.some((index) => rows[index]?.state === "done");
    const cause = ended.problem === undefined ? "" : ` (${ended.problem.title})`;
    const why = stopped ? "stopped before it ran" : arrived ? `the batch ended before it ran${cause}` : `the batch was refused${cause}`;
    for (const index of indexes) update(index, (row) => notRunRow(row, why));
    setRunning(false);
    if (ended.credits !== undefined) deps.showCredits(ended.credits);
    showCost();
    const done = indexes.filter((index) => rows[index]?.state === "done").length;
    const notRun = indexes.length - done;
    // Of the rows this run took: a re-run's count is its own rows', not the whole table's.
    const failed = indexes.filter((index) => rows[index]?.record.verdict === "FAIL").length;
    if (stopped) status.textContent = `Stopped: ${done} of ${indexes.length} done. ${notRun} not run.`;
    else if (ended.problem !== undefined) {
      status.textContent = `Not run: ${notRun} of ${indexes.length}.`;
      say(ended.problem.title, ended.problem.detail);
    } else status.textContent = `Done: ${done} of ${indexes.length}, ${failed} failed.`;
    showSummary();
    offerNotRun(operation);
  }

  /** The batch does not fit what the key has left: nothing is sent; its rows say so, and the first that fit are offered. */
  function overBudget(operation: Operation, indexes: readonly number[], fits: number, credits: Credits): void {
    const words = overBudgetWords(operation, indexes.length, fits, credits);
    for (const index of indexes) update(index, (row) => notRunRow(row, words.reason));
    setRunning(false);
    showCost();
    showSummary();
    status.textContent = words.status;
    const first = indexes.slice(0, fits);
    const button = words.first === undefined ? null : h("button", { type: "button", id: "batch-run-first" }, words.first);
    button?.addEventListener("click", () => void run(operation, first));
    showOffer(h("p", {}, words.offer), button);
  }

  /** After a run, rows left NOT RUN (over the budget, refused, stopped) can be run from here, without re-running what failed. */
  function offerNotRun(operation: Operation): void {
    const waiting = rows.filter((row) => row.state === "not run").map((row) => row.index);
    if (waiting.length === 0) return;
    const button = h(
      "button",
      { type: "button", id: "batch-run-rest", class: "secondary" },
      `${operation === "check" ? "Check" : "Trace"} the ${waiting.length} row${waiting.length === 1 ? "" : "s"} not run`,
    );
    button.addEventListener("click", () => void run(operation, waiting));
    showOffer(null, button);
  }

  function showOffer(text: HTMLElement | null, button: HTMLButtonElement | null): void {
    offer.replaceChildren(...[text, button].filter((part): part is HTMLElement => part !== null));
    offer.hidden = offer.childElementCount === 0;
  }

  function hideOffer(): void {
    offer.replaceChildren();
    offer.hidden = true;
  }

  /** The failures counted by code, as the CLI's summary has them: "Failures by code: 8 final_status_error, 4 expectation_not_met". */
  function showSummary(): void {
    const counts = failureCountText(rows.map((row) => row.record));
    summary.textContent = counts === "" ? "" : `Failures by code: ${counts}`;
  }

  /** The batch's chain-length limit from its field: undefined when empty, null when it is not one. */
  function batchLimit(): number | undefined | null {
    const text = limitInput.value.trim();
    return text === "" ? undefined : redirectLimit(text);
  }

  function update(index: number, change: (row: BatchRow) => BatchRow): void {
    const row = rows[index];
    if (row === undefined) return;
    const next = change(row);
    if (next === row) return;
    rows[index] = next;
    draw(next);
    applyFilter();
  }

  function draw(row: BatchRow): void {
    const line = lines[row.index];
    if (line === undefined) return;
    const { record } = row;
    const verdict = row.state === "waiting" ? "waiting" : record.verdict;
    line.className =
      row.state === "waiting" ? "waiting" : record.verdict === "PASS" ? "passed" : row.state === "not run" ? "not-run" : "failed";
    const number =
      row.result === undefined
        ? String(row.index + 1)
        : h(
            "button",
            {
              type: "button",
              class: "row-open",
              "aria-expanded": "false",
              "aria-label": `Row ${row.index + 1}: show its ${row.result.kind === "trace" ? "chain" : "check"}`,
            },
            `${row.index + 1} ▸`,
          );
    if (number instanceof HTMLButtonElement) number.addEventListener("click", () => toggle(row.index));
    // The reason in words, and its code beside it, as the CLI's table and the CSV have both.
    const reason: Child[] = row.state === "waiting" ? [] : [record.reason];
    if (row.state === "done" && record.code !== "") reason.push(" ", h("code", { class: "reason-code" }, record.code));
    line.replaceChildren(
      h("td", {}, number),
      h("td", { class: "verdict-cell" }, verdict),
      h("td", {}, h("span", { class: "url" }, row.entry.url)),
      h("td", {}, record.finalStatus),
      h("td", {}, h("span", { class: "url" }, record.finalUrl)),
      h("td", {}, record.hops),
      h("td", { class: "reason" }, ...reason),
    );
  }

  /** Opens a finished row to its answer, drawn by the single-URL renderers; one row at a time. */
  function toggle(index: number): void {
    const wasOpen = opened?.index === index;
    close();
    const row = rows[index];
    const line = lines[index];
    if (wasOpen || row?.result === undefined || line === undefined) return;
    const answer = row.result.kind === "trace" ? renderTrace(row.result.value) : renderCheck(row.result.value);
    // The body takes the table's width without widening it (page.css), so the row's own columns stay in view.
    // The row's batch verdict heads its answer: the renderer below judges the chain by the contract, the batch by its own rule.
    const { record } = row;
    const heading = h(
      "p",
      { class: `batch-detail-verdict ${record.verdict === "PASS" ? "passed" : "failed"}` },
      h("strong", {}, `Row ${index + 1}: ${record.verdict}`),
      record.reason === "" ? null : ` · ${record.reason}`,
      record.code === "" ? null : " ",
      record.code === "" ? null : h("code", {}, record.code),
    );
    const detail = h(
      "tr",
      { class: "batch-detail" },
      h(
        "td",
        { colspan: COLUMNS },
        h("div", { class: `batch-detail-body ${record.verdict === "PASS" ? "passed" : "failed"}` }, heading, answer),
      ),
    );
    line.after(detail);
    line.querySelector("button.row-open")?.setAttribute("aria-expanded", "true");
    opened = { index, line: detail };
    applyFilter();
  }

  function close(): void {
    if (opened === undefined) return;
    opened.line.remove();
    lines[opened.index]?.querySelector("button.row-open")?.setAttribute("aria-expanded", "false");
    opened = undefined;
  }

  function applyFilter(): void {
    rows.forEach((row, index) => {
      const line = lines[index];
      // Only the rows that passed are hidden: a row being re-run stays in view while it waits.
      if (line !== undefined) line.hidden = failuresOnly.checked && row.state === "done" && row.record.verdict === "PASS";
      if (opened?.index === index) opened.line.hidden = line?.hidden ?? false;
    });
    const again = rows.filter((row) => runsAgain(row, includeRefused.checked)).length;
    rerun.disabled = running !== undefined || again === 0;
    rerun.textContent = again === 0 ? "Re-run rows that did not pass" : `Re-run ${again} row${again === 1 ? "" : "s"} that did not pass`;
    for (const button of offer.querySelectorAll("button")) button.disabled = running !== undefined;
  }

  function progress(operation: Operation, indexes: readonly number[]): void {
    const done = indexes.filter((index) => rows[index]?.state === "done").length;
    const failed = indexes.filter((index) => rows[index]?.record.verdict === "FAIL" && rows[index]?.state === "done").length;
    status.textContent = `${operation === "check" ? "Checking" : "Tracing"}: ${done} of ${indexes.length} done, ${failed} failed.`;
  }

  function setRunning(busy: boolean): void {
    for (const button of runButtons) button.disabled = busy;
    stop.disabled = !busy;
    output.setAttribute("aria-busy", String(busy));
    applyFilter();
  }

  function say(title: string, detail: string): void {
    problem.replaceChildren(h("div", { class: "problem" }, h("strong", {}, title), detail === "" ? null : h("p", {}, detail)));
  }
}
