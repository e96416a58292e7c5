import type { HopOutcome, PeerCertificate, TlsDetail } from "../../probe/hop-types.js";
import type { Paint } from "./paint.js";

/** What a request came to, in a few words: the status line, or how it failed or why it was not sent. */
export function answerCell(outcome: HopOutcome, paint: Paint): string {
  switch (outcome.kind) {
    case "response":
      return paint.status(outcome.response.status, `${outcome.response.status} ${outcome.response.statusText}`);
    case "failure": {
      const { failure } = outcome;
      return paint.bad(`${failure.timedOut ? "timed out" : "failed"} at ${failure.stage} (${failure.cause})`);
    }
    case "refused":
      return paint.bad(`not sent: ${outcome.refusal.rule}`);
    case "overloaded":
      return paint.bad(`not sent: ${outcome.overload.why}`);
  }
}

/** The address the request was sent to, when it got that far. */
export function addressCell(outcome: HopOutcome): string {
  if (outcome.kind === "response") return outcome.response.remoteAddress;
  if (outcome.kind === "failure") return outcome.failure.remoteAddress ?? "-";
  return "-";
}

/** The URL requested, with an arrow to where it redirects when it does. */
export function urlCell(url: string, location: string | null, paint: Paint, note = ""): string {
  if (location === null) return url;
  return `${url} ${paint.notice("→")} ${location}${note === "" ? "" : ` ${paint.dim(note)}`}`;
}

/** One line per HTTPS request: who the certificate names, who issued it, and until when it is valid. */
export function tlsLines(requests: readonly { readonly label: string; readonly outcome: HopOutcome | undefined }[], paint: Paint): string {
  return requests
    .flatMap(({ label, outcome }) => {
      const tls = outcome?.kind === "response" ? outcome.response.tls : null;
      return tls === null || tls.certificate === null ? [] : [`  ${paint.dim(`tls ${label}`)}  ${describeTls(tls, tls.certificate)}\n`];
    })
    .join("");
}

function describeTls(tls: TlsDetail, certificate: PeerCertificate): string {
  return `${tls.protocol ?? "unknown"}, subject ${certificate.subjectName || "(none)"}, issuer ${certificate.issuerName || "(none)"}, valid ${day(certificate.validFrom)} to ${day(certificate.validTo)}`;
}

function day(iso: string): string {
  return iso.slice(0, 10);
}
