import type { Details } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h } from "./dom.js";
import { renderCertificates } from "./certificates.js";
import { renderWaterfall } from "./waterfall.js";

/** A client-side redirect that was reported and, as the contract says, not followed. */
export function clientRedirectText(details: Details | undefined): Child {
  const seen = details?.clientRedirect;
  if (seen === undefined) return null;
  const how = seen.kind === "meta_refresh" ? "meta refresh" : seen.kind === "refresh_header" ? "Refresh header" : seen.kind;
  return h("span", {}, `${how} to `, h("span", { class: "url" }, seen.url), ` after ${seen.delaySeconds} s (not followed)`);
}

/** Where the time went and which certificates were shown; a note when the answer had no details. `hops`: a trace's chain length. */
export function renderRequests(details: Details | undefined, hops?: number): HTMLElement {
  if (details === undefined || details.requests.length === 0) {
    return h("p", { class: "note" }, "This answer carries no per-request details (timings, certificates).");
  }
  return h("div", { class: "requests" }, renderWaterfall(details.requests, hops), renderCertificates(details.requests));
}
