import type { RequestDetail, TransportSecurity } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { h, table } from "./dom.js";
import { hostOf } from "./format.js";

/** Under this max-age (180 days) the policy is flagged, as redirect-check's hsts_short warning says. */
const SHORT_MAX_AGE_SECONDS = 180 * 86_400;

/**
 * One row per HTTPS request that got an answer: the Strict-Transport-Security
 * policy it set (the first field, as a browser reads it) and whether Alt-Svc
 * advertised HTTP/3. The service does not speak QUIC: h3 is what the site
 * offered, never something tried.
 */
export function renderTransportSecurity(requests: readonly RequestDetail[]): HTMLElement | null {
  const rows = requests.flatMap((request, index) => {
    const transport = request.transportSecurity;
    if (transport === undefined) return [];
    return [[String(index + 1), hostOf(request.url), hstsCell(transport), transport.h3Advertised ? "advertised (not tried)" : "–"]];
  });
  if (rows.length === 0) return null;
  return h(
    "section",
    { class: "transport-security", "aria-labelledby": "transport-security-heading" },
    h("h3", { id: "transport-security-heading" }, "Transport security"),
    table(
      "Strict-Transport-Security and HTTP/3 as each HTTPS answer set them",
      ["Request", "Host", "HSTS", "HTTP/3 (Alt-Svc)"],
      rows,
      "transport-table",
    ),
  );
}

function hstsCell(transport: TransportSecurity): HTMLElement {
  const hsts = transport.hsts;
  if (hsts === undefined) {
    return transport.hstsInvalid
      ? h("span", { class: "badge bad" }, "invalid, ignored by browsers")
      : h("span", { class: "badge warn" }, "none");
  }
  const days = Math.floor(hsts.maxAge / 86_400);
  const flags = [hsts.includeSubDomains ? "includeSubDomains" : "", hsts.preload ? "preload" : ""].filter((flag) => flag !== "");
  const text = [`max-age=${hsts.maxAge} (${days} day${days === 1 ? "" : "s"})`, ...flags].join(", ");
  const badge =
    hsts.maxAge === 0
      ? h("span", { class: "badge bad" }, "removes the policy")
      : hsts.maxAge < SHORT_MAX_AGE_SECONDS
        ? h("span", { class: "badge warn" }, "under 180 days")
        : null;
  return h("span", {}, text, ...(badge === null ? [] : [" ", badge]));
}
