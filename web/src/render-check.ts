import { type CheckSiteResponse, FailedStage, SiteStatus } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { facts, h } from "./dom.js";
import { clientRedirectText, proxyText, renderRequests, timeText } from "./render-details.js";

const STAGES: Readonly<Record<FailedStage, string>> = {
  [FailedStage.UNSPECIFIED]: "unknown",
  [FailedStage.DNS]: "DNS",
  [FailedStage.CONNECT]: "connect",
  [FailedStage.TLS]: "TLS",
  [FailedStage.HTTP]: "HTTP",
};

/** An is-site-down answer: the verdict first and large, then the facts behind it. */
export function renderCheck(result: CheckSiteResponse): HTMLElement {
  const up = result.status === SiteStatus.UP;
  const details = result.details;
  const verdict = h(
    "div",
    { class: `verdict ${up ? "up" : "down"}` },
    h("span", { class: "verdict-word" }, up ? "UP" : "DOWN"),
    up ? null : h("p", { class: "reason" }, result.reason ?? "no reason given"),
    up || result.failedStage === undefined ? null : h("p", { class: "stage" }, `Failed at the ${STAGES[result.failedStage]} stage`),
  );
  const hops = result.redirectHops.length === 0 ? null : h("ol", { class: "hops" }, ...result.redirectHops.map((hop) => h("li", {}, `${hop.status} `, h("span", { class: "url" }, hop.url))));
  return h(
    "article",
    { class: "check" },
    h("h2", {}, "Is it down?"),
    verdict,
    facts([
      ["Requested", h("span", { class: "url" }, result.requestedUrl)],
      ["Final URL", result.finalUrl === undefined ? null : h("span", { class: "url" }, result.finalUrl)],
      ["Status", result.statusCode === undefined ? null : `${result.statusCode} ${result.statusText ?? ""}`.trim()],
      ["Response time", timeText(result.responseTime, details)],
      ["Redirects", hops],
      ["Proxy / CDN", proxyText(details, result.proxyBlocked)],
      ["Client-side redirect", clientRedirectText(details)],
      ["Code", details?.code],
    ]),
    renderRequests(details),
  );
}
