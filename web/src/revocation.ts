import type { RequestDetail, StapledOcsp } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { h, table } from "./dom.js";
import { formatDate, hostOf } from "./format.js";

interface Shown {
  readonly host: string;
  readonly ocsp: StapledOcsp;
  readonly key: string;
  /** The requests (numbered from 1) whose handshake carried this reading. */
  readonly requests: number[];
}

/**
 * The OCSP answer each HTTPS request's server stapled to its handshake, as
 * the server shows it: one row per host and reading, naming its requests as
 * the certificates table does. The service never asks a responder or a CRL
 * address itself (addresses a stranger chose), so "nothing stapled" says only
 * that: the section's note says so.
 */
export function renderRevocation(requests: readonly RequestDetail[]): HTMLElement | null {
  const shown: Shown[] = [];
  requests.forEach((request, index) => {
    const ocsp = request.tls?.ocsp;
    if (ocsp === undefined) return;
    const host = hostOf(request.url);
    const key = [
      ocsp.status,
      ocsp.forLeaf,
      ocsp.signature,
      ocsp.revokedAt,
      ocsp.thisUpdate,
      ocsp.nextUpdate,
      ocsp.invalidReason,
      ocsp.stale,
    ].join("|");
    const same = shown.find((entry) => entry.host === host && entry.key === key);
    if (same !== undefined) same.requests.push(index + 1);
    else shown.push({ host, ocsp, key, requests: [index + 1] });
  });
  if (shown.length === 0) return null;
  const rows = shown.map(({ host, ocsp, requests: numbers }) => [
    numbers.join(", "),
    host,
    statusCell(ocsp),
    leafCell(ocsp),
    signatureCell(ocsp),
    updatedCell(ocsp),
  ]);
  return h(
    "section",
    { class: "revocation", "aria-labelledby": "revocation-heading" },
    h("h3", { id: "revocation-heading" }, "Revocation (stapled OCSP)"),
    table(
      "The OCSP answer each HTTPS server stapled to its handshake",
      ["Requests", "Host", "Stapled answer", "For", "Signature", "Updated"],
      rows,
      "revocation-table",
    ),
    h("p", { class: "note" }, "Read from the handshake only: sitediag never asks an OCSP responder or a CRL address itself."),
  );
}

function statusCell(ocsp: StapledOcsp): HTMLElement {
  switch (ocsp.status) {
    case "good":
      return h("span", { class: "badge ok" }, "good");
    case "revoked": {
      const since = ocsp.revokedAt === undefined ? "" : ` ${formatDate(new Date(ocsp.revokedAt))}`;
      return h(
        "span",
        {},
        h("span", { class: "badge bad" }, "revoked"),
        since,
        ocsp.revocationReason === undefined ? null : h("small", {}, ` (${ocsp.revocationReason})`),
      );
    }
    case "unknown":
      return h("span", { class: "badge warn" }, "unknown to its responder");
    case "invalid":
      return h("span", {}, h("span", { class: "badge warn" }, "invalid"), " ", h("small", {}, ocsp.invalidReason ?? ""));
    default:
      return h("span", { class: "badge info" }, "nothing stapled");
  }
}

function leafCell(ocsp: StapledOcsp): HTMLElement | string {
  if (ocsp.status === "none" || ocsp.status === "invalid") return "–";
  return ocsp.forLeaf ? "this certificate" : h("span", { class: "badge warn" }, "another certificate");
}

function signatureCell(ocsp: StapledOcsp): HTMLElement | string {
  if (ocsp.status === "none" || ocsp.status === "invalid") return "–";
  if (ocsp.signature === "verified") return h("span", { class: "badge ok" }, "verified");
  const badge = h(
    "span",
    { class: `badge ${ocsp.signature === "failed" ? "bad" : "info"}` },
    ocsp.signature === "failed" ? "fails" : "not checked",
  );
  return h("span", {}, badge, ocsp.signatureNote === undefined ? null : h("small", {}, ` ${ocsp.signatureNote}`));
}

function updatedCell(ocsp: StapledOcsp): HTMLElement | string {
  if (ocsp.thisUpdate === undefined) return "–";
  const next =
    ocsp.nextUpdate === undefined
      ? null
      : h(
          "small",
          { class: ocsp.stale ? "stale" : undefined },
          `${ocsp.stale ? "stale since" : "next"} ${formatDate(new Date(ocsp.nextUpdate))}`,
        );
  return h("span", {}, formatDate(new Date(ocsp.thisUpdate)), ...(next === null ? [] : [h("br"), next]));
}
