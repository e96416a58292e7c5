import type { Details, TlsVersionAttempt } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h, table } from "./dom.js";
import { formatMs } from "./format.js";

const VERSION_NAMES: Readonly<Record<string, string>> = {
  "TLSv1.3": "TLS 1.3",
  "TLSv1.2": "TLS 1.2",
  "TLSv1.1": "TLS 1.1",
  TLSv1: "TLS 1.0",
};
const LEGACY: ReadonlySet<string> = new Set(["TLSv1", "TLSv1.1"]);

/**
 * "TLS versions": for an https first host, a handshake limited to each of
 * TLS 1.3, 1.2, 1.1 and 1.0 to the first request's address, and what each
 * came to (accepted with its cipher and ALPN choice, or the refusal), and
 * whether the server chose h2. A legacy version accepted is marked.
 */
export function renderTlsVersions(details: Details | undefined): HTMLElement | null {
  const survey = details?.tlsVersions;
  if (survey === undefined) return null;
  const note =
    survey.refusedReason !== undefined
      ? `Not sent: ${survey.refusedReason}`
      : survey.h2
        ? "The server chose h2 (HTTP/2) in ALPN."
        : "The server did not choose h2 (HTTP/2) in ALPN.";
  return h(
    "section",
    { class: "tls-versions", "aria-labelledby": "tls-versions-heading" },
    h("h3", { id: "tls-versions-heading" }, `TLS versions at ${survey.address}`),
    table(
      "A handshake limited to each TLS version, nothing sent after it",
      ["Version", "Handshake", "Cipher", "ALPN", "Time", "Why not"],
      survey.attempts.map(versionRow),
      "tls-versions-table",
    ),
    h("p", { class: "note" }, note),
  );
}

function versionRow(attempt: TlsVersionAttempt): Child[] {
  const name = VERSION_NAMES[attempt.version] ?? attempt.version;
  if (attempt.outcome === "accepted") {
    const badge = LEGACY.has(attempt.version)
      ? h("span", { class: "badge warn", title: "browsers no longer speak this version" }, "accepted")
      : h("span", { class: "badge ok" }, "accepted");
    return [name, badge, attempt.cipher ?? "–", attempt.alpn ?? "–", attempt.tlsMs === undefined ? "–" : formatMs(attempt.tlsMs), ""];
  }
  if (attempt.outcome === "not_offered_locally")
    return [name, h("span", { class: "badge" }, "not offered here"), "–", "–", "–", attempt.reason ?? ""];
  const word = attempt.outcome === "refused" ? "refused" : "failed";
  return [
    name,
    h("span", { class: `badge ${word === "refused" ? "warn" : "bad"}`, title: attempt.reason ?? "" }, word),
    "–",
    "–",
    "–",
    attempt.cause ?? attempt.code ?? "",
  ];
}
