import { ChainStatus, type TraceRedirectsResponse } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { CHAIN_STATUS_TEXT } from "./chain-status.js";
import { facts, h, table } from "./dom.js";
import { clientRedirectText, hopTimeText, proxyText, renderRequests, timeText } from "./render-details.js";

const GOOD = new Set([ChainStatus.HEALTHY, ChainStatus.REDIRECTS_DETECTED]);

/** A redirect-check answer: the chain's status, its hops, its warnings, and where the time went. */
export function renderTrace(result: TraceRedirectsResponse): HTMLElement {
  const good = GOOD.has(result.chainStatus);
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
  const warnings =
    result.warnings.length === 0
      ? h("p", { class: "note" }, "No warnings.")
      : h(
          "ul",
          { class: "warnings" },
          ...result.warnings.map((warning) =>
            h("li", {}, h("code", {}, warning.code), " ", warning.message, warning.hop === undefined ? null : h("span", { class: "hop-ref" }, ` (hop ${warning.hop})`)),
          ),
        );
  return h(
    "article",
    { class: "trace" },
    h("h2", {}, "Redirect trace"),
    h("div", { class: `verdict ${good ? "up" : "down"}` }, h("span", { class: "verdict-word chain-status" }, CHAIN_STATUS_TEXT[result.chainStatus])),
    facts([
      ["Input", h("span", { class: "url" }, result.input)],
      ["Final URL", h("span", { class: "url" }, result.finalUrl)],
      ["Final status", result.finalStatus],
      ["Redirects", result.redirects],
      ["Total time", timeText(result.totalTimeMs, result.details, result.chain.length)],
      ["Proxy / CDN", proxyText(result.details, false)],
      ["Client-side redirect", clientRedirectText(result.details)],
      ["Code", result.details?.code],
    ]),
    hops,
    h("section", { class: "warnings-section", "aria-labelledby": "warnings-heading" }, h("h3", { id: "warnings-heading" }, "Warnings"), warnings),
    renderRequests(result.details, result.chain.length),
  );
}
