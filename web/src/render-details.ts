import type { ChainHop, Details } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { barsOf, measuredMs } from "./bars.js";
import { type Child, h } from "./dom.js";
import { formatMs, formatWholeMs } from "./format.js";
import { renderCertificates } from "./certificates.js";
import { renderFamilies } from "./families.js";
import { renderAddresses } from "./addresses.js";
import { renderTlsVersions } from "./tls-versions.js";
import { renderDnssec } from "./dnssec.js";
import { renderNameResolution } from "./name-resolution.js";
import { renderRegistration } from "./registration.js";
import { renderResponseHeaders } from "./response-headers.js";
import { renderRevocation } from "./revocation.js";
import { renderSearch } from "./search-signals.js";
import { renderTransportSecurity } from "./transport-security.js";
import { renderWaterfall } from "./waterfall.js";

/** A client-side redirect that was reported and, as the contract says, not followed. */
export function clientRedirectText(details: Details | undefined): Child {
  const seen = details?.clientRedirect;
  if (seen === undefined) return null;
  const how = seen.kind === "meta_refresh" ? "meta refresh" : seen.kind === "refresh_header" ? "Refresh header" : seen.kind;
  return h("span", {}, `${how} to `, h("span", { class: "url" }, seen.url), ` after ${seen.delaySeconds} s (not followed)`);
}

/** Where the time went, which certificates were shown and what HSTS each HTTPS answer set; a note when the answer had no details. `hops`: a trace's chain length. */
export function renderRequests(details: Details | undefined, hops?: number): HTMLElement {
  if (details === undefined || details.requests.length === 0) {
    return h("p", { class: "note" }, "This answer carries no per-request details (timings, certificates).");
  }
  return h(
    "div",
    { class: "requests" },
    renderWaterfall(details.requests, hops),
    renderResponseHeaders(details.requests),
    renderCertificates(details.requests),
    renderRevocation(details.requests),
    renderTransportSecurity(details.requests),
    renderFamilies(details),
    renderAddresses(details),
    renderTlsVersions(details),
    renderNameResolution(details),
    renderDnssec(details),
    renderRegistration(details),
    renderSearch(details),
  );
}

/**
 * A diagnostic's time (responseTime, totalTimeMs): with details, the sum of
 * the totals the waterfall shows, to 0.1 ms, so the figure above and the
 * table below never disagree; without, the contract's whole milliseconds
 * (that sum rounded half up). `hops`: a trace's chain length.
 */
export function timeText(wholeMs: number | undefined, details: Details | undefined, hops?: number): string | null {
  if (wholeMs === undefined) return null;
  if (details === undefined || details.requests.length === 0) return formatWholeMs(wholeMs);
  return formatMs(measuredMs(barsOf(details.requests, hops)));
}

/** A trace hop's time: the measured total of the request that answered it, as the waterfall shows it; else the contract's whole figure. */
export function hopTimeText(hop: ChainHop, details: Details | undefined, hops: number): string {
  const answered = details === undefined ? [] : barsOf(details.requests, hops).filter((bar) => bar.role === "hop");
  const bar = answered[hop.hop - 1];
  return bar === undefined ? formatWholeMs(hop.responseTimeMs) : formatMs(bar.totalMs);
}
