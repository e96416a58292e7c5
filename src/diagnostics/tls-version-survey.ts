/**
 * Which TLS versions the first host accepts, for details: when the first
 * request was HTTPS and reached an address, a handshake limited to each of
 * TLS 1.3, 1.2, 1.1 and 1.0 to that address (src/probe/tls-versions.ts).
 * The verdict never waits on it; nothing is written after a handshake.
 */
import type { Prober } from "../probe/hop-types.js";
import type { TlsVersionAttempt } from "../probe/tls-versions.js";
import type { TlsVersionSurvey } from "./diagnostic-details.js";
import type { FamilyRequestLimits, FirstRequest } from "./family-comparison.js";
import { traceWarning, type TraceWarning } from "./redirect-trace-result.js";

export type { TlsVersionAttempt } from "../probe/tls-versions.js";
export type { TlsVersionSurvey } from "./diagnostic-details.js";

export interface TlsVersionEvidence {
  readonly survey: TlsVersionSurvey;
  readonly warnings: readonly TraceWarning[];
}

/**
 * Starts the handshakes as the first request ends; null when there is
 * nothing to try (plain http, a first request that never connected). Resolves to null when the
 * diagnostic's signal cut them short: that says nothing of the server.
 */
export function startTlsVersionSurvey(
  prober: Prober,
  first: FirstRequest,
  limits: FamilyRequestLimits,
): Promise<TlsVersionEvidence | null> | null {
  if (first.url.protocol !== "https:") return null;
  // A first request that never connected says the versions would not either: nothing is tried.
  if (first.outcome.kind === "failure" && (first.outcome.failure.stage === "dns" || first.outcome.failure.stage === "connect")) return null;
  const reached = first.outcome.kind === "response" ? first.outcome.response.remoteAddress : first.outcome.failure.remoteAddress;
  if (reached === null || reached === "") return null;
  return versionEvidence(prober, first, limits, reached);
}

async function versionEvidence(
  prober: Prober,
  first: FirstRequest,
  limits: FamilyRequestLimits,
  address: string,
): Promise<TlsVersionEvidence | null> {
  const outcome = await prober.tlsVersions({
    url: first.url,
    address,
    timeoutMs: limits.timeoutMs,
    ports: limits.ports,
    ...(limits.signal === undefined ? {} : { signal: limits.signal }),
  });
  if (limits.signal?.aborted === true) return null;
  if (outcome.kind === "refused") {
    return {
      survey: { address, attempts: [], refusal: { code: outcome.refusal.code, reason: outcome.refusal.reason }, h2: false },
      warnings: [],
    };
  }
  const survey: TlsVersionSurvey = {
    address: outcome.address,
    attempts: outcome.attempts,
    refusal: null,
    h2: outcome.attempts.some(({ alpn }) => alpn === "h2"),
  };
  return { survey, warnings: versionWarnings(survey, first) };
}

const VERSION_NAMES: Readonly<Record<TlsVersionAttempt["version"], string>> = {
  "TLSv1.3": "TLS 1.3",
  "TLSv1.2": "TLS 1.2",
  "TLSv1.1": "TLS 1.1",
  TLSv1: "TLS 1.0",
};

/**
 * `tls13_not_supported` when the server refused TLS 1.3 (not when the
 * handshake never got to TLS, or we could not offer it), and
 * `legacy_tls_accepted` when it completed a TLS 1.0 or 1.1 handshake.
 */
function versionWarnings(survey: TlsVersionSurvey, first: FirstRequest): TraceWarning[] {
  const host = first.url.host;
  const warnings: TraceWarning[] = [];
  const tls13 = survey.attempts.find(({ version }) => version === "TLSv1.3");
  if (tls13?.outcome === "refused")
    warnings.push(
      traceWarning("tls13_not_supported", `${host} (${survey.address}) refused a TLS 1.3 handshake: ${tls13.reason ?? "refused"}`, 1),
    );
  const legacy = survey.attempts.filter(({ version, outcome }) => outcome === "accepted" && (version === "TLSv1" || version === "TLSv1.1"));
  if (legacy.length > 0) {
    warnings.push(
      traceWarning(
        "legacy_tls_accepted",
        `${host} (${survey.address}) still completes a handshake over ${legacy.map(({ version }) => VERSION_NAMES[version]).join(" and ")}, which browsers no longer speak`,
        1,
      ),
    );
  }
  return warnings;
}

export function versionName(version: TlsVersionAttempt["version"]): string {
  return VERSION_NAMES[version];
}
