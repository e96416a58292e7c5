import type { ChainCertificate, TlsDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { h, table } from "./dom.js";
import { formatDate } from "./format.js";

/**
 * The chain behind one row of the certificates table (details): each
 * certificate as Node links it, leaf first, each followed by its issuer, the
 * link that failed verification marked and named in words. Collapsed when
 * the chain verified, open when it did not. Null without a chain.
 */
export function renderChain(tls: TlsDetail, requests: readonly number[], host: string): HTMLElement | null {
  if (tls.chain.length === 0) return null;
  const verification = tls.verification;
  const failedAt = verification !== undefined && !verification.verified ? (verification.failedAt ?? null) : null;
  const reason = verification?.reason ?? "not trusted";
  const failed = verification !== undefined && !verification.verified;
  const rows = tls.chain.map((certificate, index) => [
    String(index),
    h(
      "span",
      {},
      certificate.subject || certificate.subjectName || "(no subject)",
      certificate.selfIssued ? h("small", {}, " self-issued") : null,
    ),
    certificate.issuerName || "–",
    keyText(certificate),
    certificate.signatureAlgorithm || "unreadable",
    h(
      "span",
      {},
      certificate.validTo === "" ? "unreadable" : formatDate(new Date(certificate.validTo)),
      h("br"),
      h("small", {}, daysText(certificate.daysRemaining)),
    ),
    // Only the failing link has a word; the others of a failed chain were not named by the failure.
    index === failedAt ? h("span", { class: "badge bad chain-reason" }, reason) : failed ? "–" : h("span", { class: "badge ok" }, "ok"),
  ]);
  const count = `${tls.chain.length} certificate${tls.chain.length === 1 ? "" : "s"}`;
  const verdict = !failed ? "verified" : failedAt === null ? `not trusted: ${reason}` : `not trusted: ${reason} at certificate ${failedAt}`;
  const label = `${requests.length === 1 ? "request" : "requests"} ${requests.join(", ")}`;
  return h(
    "details",
    { class: "certificate-chain", open: failed },
    h("summary", {}, `Chain shown to ${label} by ${host}: ${count}, ${verdict}`),
    table(
      `The certificates of the chain shown to ${label}, leaf first, each followed by its issuer`,
      ["#", "Subject", "Issuer", "Key", "Signature", "Expires", "Link"],
      rows,
      "chain-table",
    ),
    verification !== undefined && verification.more > 0
      ? h("p", { class: "note" }, `${verification.more} more certificate${verification.more === 1 ? "" : "s"} above these are not listed.`)
      : null,
    h("p", { class: "note" }, "In issuing order, as Node links them; not necessarily the order the server sent them in."),
  );
}

function keyText(certificate: ChainCertificate): string {
  if (certificate.keyType === "") return "unreadable";
  const size = certificate.keySize > 0 ? ` ${certificate.keySize}` : "";
  const curve = certificate.keyCurve === "" ? "" : ` (${certificate.keyCurve})`;
  return `${certificate.keyType.toUpperCase()}${size}${curve}`;
}

function daysText(days: number): string {
  if (days < 0) return `expired ${-days} day${days === -1 ? "" : "s"} ago`;
  return `in ${days} day${days === 1 ? "" : "s"}`;
}
