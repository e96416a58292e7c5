import { ChainStatus, type TraceRedirectsResponse } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { CHAIN_STATUS_TEXT } from "./chain-status.js";
import { facts, h, table } from "./dom.js";
import { proxyVerdictOf } from "./render-check.js";
import { clientRedirectText, hopTimeText, renderRequests, timeText } from "./render-details.js";
import { problemLine, problemsOf, warningList } from "./warnings.js";

const GOOD = new Set([ChainStatus.HEALTHY, ChainStatus.REDIRECTS_DETECTED]);

/**
 * A redirect-check answer: the chain's status, its hops, its warnings, and
 * where the time went. A warning of severity problem (an https -> http
 * downgrade, a final 4xx/5xx) turns the banner from good to problem, with
 * the problems named in it, whatever the chain status says.
 */
export function renderTrace(result: TraceRedirectsResponse): HTMLElement {
  const problems = problemsOf(result.warnings);
  const good = GOOD.has(result.chainStatus) && problems.length === 0;
  const hops = table(
    "Hops",
    ["#", "Status", "Redirect", "Host", "HTTPS upgrade", "Time", "URL"],
    result.chain.map((hop) => [
      hop.hop,
      `${hop.status} ${hop.statusText}`,
      hop.redirectType ?? "–",
      hop.hostname,
      hop.upgradedToHttps ? "yes" : "no",
      hopTimeText(hop, result.details, result.chain.length),
      h("span", { class: "url" }, hop.url),
    ]),
    "hops",
  );
  return h(
    "article",
    { class: "trace" },
    h("h2", {}, "Redirect trace"),
    h(
      "div",
      { class: `verdict ${good ? "up" : "down"}` },
      h("span", { class: "verdict-word chain-status" }, CHAIN_STATUS_TEXT[result.chainStatus]),
      GOOD.has(result.chainStatus) ? problemLine(problems) : null,
    ),
    facts([
      ["Input", h("span", { class: "url" }, result.input)],
      ["Final URL", h("span", { class: "url" }, result.finalUrl)],
      ["Final status", result.finalStatus],
      ["Redirects", result.redirects],
      ["Total time", timeText(result.totalTimeMs, result.details, result.chain.length)],
      ["Proxy / CDN", proxyVerdictOf(result.details, result.chain.at(-1)?.status)?.sentence],
      ["Client-side redirect", clientRedirectText(result.details)],
      ["Code", result.details?.code],
    ]),
    hops,
    h(
      "section",
      { class: "warnings-section", "aria-labelledby": "warnings-heading" },
      h("h3", { id: "warnings-heading" }, "Warnings"),
      warningList(result.warnings, "hop"),
    ),
    renderRequests(result.details, result.chain.length),
  );
}
