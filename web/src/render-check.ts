import { type CheckSiteResponse, type Details, FailedStage, SiteStatus } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type ProxyVerdict, proxyVerdict } from "../../src/diagnostics/proxy-verdict.js";
import { facts, h } from "./dom.js";
import { clientRedirectText, renderRequests, timeText } from "./render-details.js";
import { problemLine, problemsOf, renderCheckWarnings } from "./warnings.js";

const STAGES: Readonly<Record<FailedStage, string>> = {
  [FailedStage.UNSPECIFIED]: "unknown",
  [FailedStage.DNS]: "DNS",
  [FailedStage.CONNECT]: "connect",
  [FailedStage.TLS]: "TLS",
  [FailedStage.HTTP]: "HTTP",
};

/**
 * The proxy or CDN that gave the final answer, in words that agree with the
 * verdict (proxy-verdict.ts); without details, only what the contract says.
 */
export function proxyVerdictOf(details: Details | undefined, status: number | undefined): ProxyVerdict | null {
  if (details?.proxy === undefined || status === undefined) return null;
  return proxyVerdict(details.proxy.provider, details.proxy.kind, status);
}

/** The verdict in one word: UP, DOWN, or the amber CHALLENGED / BLOCKED (also what the page announces). */
export function checkVerdictWord(result: CheckSiteResponse): string {
  const gate = proxyVerdictOf(result.details, result.statusCode)?.gate ?? null;
  if (gate !== null) return gate.toUpperCase();
  return result.status === SiteStatus.UP ? "UP" : "DOWN";
}

/**
 * An is-site-down answer: the verdict first and large, then the facts behind
 * it and the evidence's warnings. A proxy's challenge or block is the third,
 * amber state: the site answered, but not to this client (the API's status
 * still says up). An up site whose evidence has a problem (a revoked
 * certificate) is not shown under a green banner: as a trace's, the banner
 * is red and names the problems; the word stays the API's.
 */
export function renderCheck(result: CheckSiteResponse): HTMLElement {
  const up = result.status === SiteStatus.UP;
  const details = result.details;
  const proxy = proxyVerdictOf(details, result.statusCode);
  const gate = proxy?.gate ?? null;
  const problems = up ? problemsOf(details?.warnings ?? []) : [];
  const verdict = h(
    "div",
    { class: `verdict ${problems.length > 0 ? "down" : gate !== null ? "gated" : up ? "up" : "down"}` },
    h("span", { class: "verdict-word" }, checkVerdictWord(result)),
    problemLine(problems),
    gate === null ? null : h("p", { class: "reason" }, proxy?.sentence),
    up ? null : h("p", { class: "reason" }, result.reason ?? "no reason given"),
    up || result.failedStage === undefined ? null : h("p", { class: "stage" }, `Failed at the ${STAGES[result.failedStage]} stage`),
  );
  const hops =
    result.redirectHops.length === 0
      ? null
      : h(
          "ol",
          { class: "hops" },
          ...result.redirectHops.map((hop) => h("li", {}, `${hop.status} `, h("span", { class: "url" }, hop.url))),
        );
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
      ["Proxy / CDN", proxy?.sentence ?? (result.proxyBlocked ? `A proxy or CDN answered ${result.statusCode ?? "with an error"}` : null)],
      ["Client-side redirect", clientRedirectText(details)],
      ["Code", details?.code],
    ]),
    renderCheckWarnings(details),
    renderRequests(details),
  );
}
