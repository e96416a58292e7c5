import { startingUrlText } from "../../src/diagnostics/starting-url.js";
import { addressFromHash, hashOf } from "./address.js";
import type { Credits } from "./credits.js";
import { curlCommand } from "./curl.js";
import { h } from "./dom.js";
import { formatDate } from "./format.js";
import { checkVerdictWord, renderCheck } from "./render-check.js";
import { problemsOf } from "./warnings.js";
import { renderTrace } from "./render-trace.js";
import { vantagesSummary } from "./render-vantages.js";
import { setUpBatchPanel } from "./batch-panel.js";
import { type Progress, startProgress } from "./progress.js";
import { type Answer, connectClient, createService, type Operation } from "./service.js";
import { setUpTabs } from "./tabs.js";
import { createVantageService } from "./vantage-service.js";
import { startVantagesLive } from "./vantages-live.js";

/** The only thing the page ever stores: the key, and only once "remember" is ticked. */
const STORED_KEY = "sitediag.apiKey";

function element<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no #${id}`);
  return found;
}

const form = element("ask", HTMLFormElement);
const keyInput = element("key", HTMLInputElement);
const remember = element("remember", HTMLInputElement);
const urlInput = element("url", HTMLInputElement);
const urlHelp = element("url-help", HTMLElement);
const everywhere = element("everywhere", HTMLInputElement);
const userAgentSelect = element("user-agent", HTMLSelectElement);
const status = element("status", HTMLElement);
const elapsed = element("elapsed", HTMLElement);
const cancel = element("cancel", HTMLButtonElement);
const problem = element("problem", HTMLElement);
const result = element("result", HTMLElement);
const credits = element("credits", HTMLElement);
const curlBox = element("curl", HTMLElement);
const curlText = element("curl-text", HTMLElement);
const copyButton = element("copy-curl", HTMLButtonElement);
const copied = element("copy-status", HTMLElement);
const buttons = [...form.querySelectorAll("button")];

const client = connectClient(location.origin);
const call = createService(client);
const callEverywhere = createVantageService(client);

const storage = (() => {
  try {
    return window.localStorage;
  } catch {
    // Storage can be switched off; the key then lives in the field only.
    return undefined;
  }
})();

const storedKey = storage?.getItem(STORED_KEY);
if (storedKey !== null && storedKey !== undefined) {
  keyInput.value = storedKey;
  remember.checked = true;
}
/** What Enter in the URL field runs: the operation the address names, so a shared trace opens as a trace. */
let enterRuns: Operation = "check";
const OPERATION_BUTTONS: Readonly<Record<Operation, string>> = { check: "Is it down?", trace: "Trace redirects" };

function followAddress(): void {
  const address = addressFromHash(location.hash);
  if (address === undefined) return;
  urlInput.value = address.url;
  setEnterRuns(address.operation);
}

function setEnterRuns(operation: Operation): void {
  enterRuns = operation;
  urlHelp.textContent = `A bare domain (example.com) is checked from https://. Enter runs “${OPERATION_BUTTONS[operation]}”.`;
}

followAddress();
window.addEventListener("hashchange", followAddress);
urlInput.addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  event.preventDefault();
  form.requestSubmit(buttons.find((button) => button.value === enterRuns));
});
remember.addEventListener("change", () => {
  if (!remember.checked) storage?.removeItem(STORED_KEY);
});

// The key field serves both tabs and sits outside their forms: Enter in it submits the visible one.
keyInput.addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  event.preventDefault();
  const visible = [form, element("batch", HTMLFormElement)].find((candidate) => candidate.closest("[hidden]") === null);
  visible?.requestSubmit();
});

setUpTabs(element("tab-single", HTMLButtonElement).parentElement ?? document.body);
setUpBatchPanel({
  client,
  key: () => {
    const key = keyInput.value.trim();
    if (key === "") {
      keyMissing(element("batch-problem", HTMLElement));
      return undefined;
    }
    rememberKey(key);
    return key;
  },
  showCredits,
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const submitter = event.submitter;
  // Without a button (Enter in the key field), the operation Enter runs in the URL field.
  const operation: Operation = submitter instanceof HTMLButtonElement ? (submitter.value === "trace" ? "trace" : "check") : enterRuns;
  void run(operation);
});

copyButton.addEventListener("click", () => {
  const text = curlText.textContent ?? "";
  navigator.clipboard.writeText(text).then(
    () => (copied.textContent = "Copied. Set KEY in your shell first: KEY=sd_…"),
    () => {
      // No clipboard outside a secure context: select the text for the reader to copy.
      const range = document.createRange();
      range.selectNodeContents(curlText);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      copied.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
    },
  );
});

let busy = false;

async function run(operation: Operation): Promise<void> {
  if (busy) return;
  const key = keyInput.value.trim();
  // The one bare-domain rule the service's trace applies, applied before is-site-down too, whose contract takes an absolute URL.
  const url = startingUrlText(urlInput.value);
  if (key === "") return keyMissing(problem);
  if (url === "") {
    showProblem("Enter a URL to check.", "");
    urlInput.setAttribute("aria-invalid", "true");
    urlInput.focus();
    return;
  }
  urlInput.removeAttribute("aria-invalid");
  rememberKey(key);
  // The URL and the operation only, never the key: the address can be shared and reloaded as the same question.
  history.replaceState(null, "", hashOf(url, operation));
  setEnterRuns(operation);

  problem.replaceChildren();
  // The last answer is to another question: dimmed (and marked stale for assistive technology) until this one's arrives.
  result.classList.add("stale");
  setBusy(true, operation === "check" ? `Checking ${url}…` : `Tracing ${url}…`);
  const progress = startProgress(elapsed, cancel);
  const fromEverywhere = everywhere.checked;
  const userAgent = userAgentSelect.value;
  if (fromEverywhere) return runFromEverywhere(operation, url, key, progress, userAgent);
  const answer = await call(operation, url, key, progress.signal, userAgent);
  const took = progress.finish();
  result.classList.remove("stale");
  if (answer.kind === "cancelled") {
    result.replaceChildren();
    setBusy(false, `Cancelled after ${took}: ${url} was not ${operation === "check" ? "checked" : "traced"} to the end.`);
    return;
  }
  setBusy(false, summaryOf(answer));
  showCredits(answer.credits);
  showCurl(operation, url, false, userAgent);
  if (answer.kind === "problem") {
    result.replaceChildren();
    showProblem(answer.problem.title, answer.problem.detail);
    return;
  }
  result.replaceChildren(answer.kind === "check" ? renderCheck(answer.result) : renderTrace(answer.result));
}

/**
 * "From every region": the streaming call, each region's row drawn as it
 * answers (the first message names them all and the deadline), the verdict
 * at the end the service's own; Cancel keeps the rows in and marks the rest.
 */
async function runFromEverywhere(operation: Operation, url: string, key: string, progress: Progress, userAgent: string): Promise<void> {
  const live = startVantagesLive(operation, url, result);
  const end = await callEverywhere(
    operation,
    url,
    key,
    progress.signal,
    userAgent,
    (event) => {
      result.classList.remove("stale");
      live.event(event);
    },
    showCredits,
  );
  const took = progress.finish();
  result.classList.remove("stale");
  if (end.kind === "cancelled") {
    live.cancel();
    setBusy(false, `Cancelled after ${took}: ${url} was not ${operation === "check" ? "checked" : "traced"} to the end.`);
    return;
  }
  setBusy(false, end.kind === "problem" ? end.problem.title : `Result: ${vantagesSummary(end.verdict)}`);
  showCredits(end.credits);
  showCurl(operation, url, true, userAgent);
  if (end.kind === "problem") {
    live.stop();
    result.replaceChildren();
    showProblem(end.problem.title, end.problem.detail);
    return;
  }
  live.finish(end.verdict, end.differences);
}

function keyMissing(where: HTMLElement): void {
  where.replaceChildren(h("div", { class: "problem" }, h("strong", {}, "Enter an API key.")));
  keyInput.setAttribute("aria-invalid", "true");
  keyInput.focus();
}

function rememberKey(key: string): void {
  keyInput.removeAttribute("aria-invalid");
  if (remember.checked) storage?.setItem(STORED_KEY, key);
  else storage?.removeItem(STORED_KEY);
}

function setBusy(running: boolean, message: string): void {
  busy = running;
  for (const button of buttons) button.disabled = running;
  result.setAttribute("aria-busy", String(running));
  status.textContent = message;
}

function summaryOf(answer: Exclude<Answer, { kind: "cancelled" }>): string {
  if (answer.kind === "problem") return answer.problem.title;
  if (answer.kind === "check") {
    // Spoken too (the status line is a live region): an up site whose evidence holds a problem says so.
    const problems = problemsOf(answer.result.details?.warnings ?? []).length;
    return `Result: ${checkVerdictWord(answer.result).toLowerCase()}${problems === 0 ? "" : `, ${problems} problem${problems === 1 ? "" : "s"}`}`;
  }
  return `Result: ${answer.result.chain.length} hop${answer.result.chain.length === 1 ? "" : "s"}`;
}

function showProblem(title: string, detail: string): void {
  problem.replaceChildren(h("div", { class: "problem" }, h("strong", {}, title), detail === "" ? null : h("p", {}, detail)));
}

function showCredits(known: Credits | undefined): void {
  if (known === undefined) return;
  const reset = known.resetAt === undefined || known.remaining === known.limit ? "" : `; more free up at ${formatDate(known.resetAt)}`;
  credits.textContent = `Credits left: ${known.remaining} of ${known.limit}${reset}`;
}

function showCurl(operation: Operation, url: string, fromEverywhere: boolean, userAgent: string): void {
  curlText.textContent = curlCommand(location.origin, operation, url, fromEverywhere, userAgent);
  copied.textContent = "";
  curlBox.hidden = false;
}
