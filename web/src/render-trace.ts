import { ChainStatus, type TraceRedirectsResponse, WarningSeverity } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { CHAIN_STATUS_TEXT } from "./chain-status.js";
import { facts, h, table } from "./dom.js";
import { proxyVerdictOf } from "./render-check.js";
import { clientRedirectText, hopTimeText, renderRequests, timeText } from "./render-details.js";

const GOOD = new Set([ChainStatus.HEALTHY, ChainStatus.REDIRECTS_DETECTED]);

/** How each severity is labelled and styled (page.css: .severity-*). */
const SEVERITY: Readonly<Record<WarningSeverity, { readonly word: string; readonly badge: string }>> = {
  [WarningSeverity.UNSPECIFIED]: { word: "note", badge: "info" },
  [WarningSeverity.INFO]: { word: "info", badge: "info" },
  [WarningSeverity.WARNING]: { word: "warning", badge: "warn" },
  [WarningSeverity.PROBLEM]: { word: "problem", badge: "bad" },
};

/**
 * A redirect-check answer: the chain's status, its hops, its warnings, and
 * where the time went. A warning of severity problem (an https -> http
 * downgrade, a final 4xx/5xx) turns the banner from good to problem, with
 * the problems named in it, whatever the chain status says.
 */
export function renderTrace(result: TraceRedirectsResponse): HTMLElement {
  const problems = result.warnings.filter((warning) => warning.severity === WarningSeverity.PROBLEM);
  const good = GOOD.has(result.chainStatus) && problems.length === 0;
  const problemLine =
    GOOD.has(result.chainStatus) && problems.length > 0
      ? h("p", { class: "reason" }, `${problems.length} problem${problems.length === 1 ? "" : "s"}: `, problems.map((warning) => warning.message).join("; "))
      : null;
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
          ...result.warnings.map((warning) => {
            const severity = SEVERITY[warning.severity];
            return h(
              "li",
              { class: `severity-${severity.word}` },
              h("span", { class: `badge ${severity.badge}` }, severity.word),
              " ",
              h("code", {}, warning.code),
              " ",
              warning.message,
              warning.hop === undefined ? null : h("span", { class: "hop-ref" }, ` (hop ${warning.hop})`),
            );
          }),
        );
  return h(
    "article",
    { class: "trace" },
    h("h2", {}, "Redirect trace"),
    h("div", { class: `verdict ${good ? "up" : "down"}` }, h("span", { class: "verdict-word chain-status" }, CHAIN_STATUS_TEXT[result.chainStatus]), problemLine),
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
    h("section", { class: "warnings-section", "aria-labelledby": "warnings-heading" }, h("h3", { id: "warnings-heading" }, "Warnings"), warnings),
    renderRequests(result.details, result.chain.length),
  );
}
