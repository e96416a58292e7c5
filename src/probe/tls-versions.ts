/**
 * Which TLS versions a server accepts (details, tls-version-survey.ts): one
 * handshake limited to each of TLS 1.3, 1.2, 1.1 and 1.0, to the address the
 * diagnostic's first request reached, under the same policy as any hop (the
 * URL screened, the name resolved again and every answer judged, the address
 * pinned and checked once connected) and within one deadline. Nothing is
 * written after a handshake: the socket is destroyed as it completes.
 */
import { isIP } from "node:net";
import { createSecureContext, type SecureContext } from "node:tls";
import { causeInfo, type FailureStage, failureCode, refusal, type PolicyRefusal } from "../shared/failures.js";

import { refusedAddressDetail } from "./policy/address-policy.js";
import { openPinned } from "./connect/connector.js";
import { type AbortWatch, createDeadline, now } from "./clock.js";
import { describeFailure, errorCodeOf } from "./failure.js";
import { startTrace } from "./hop-trace.js";
import type { HopDeps } from "./hop.js";
import type { TlsVersionAttempt, TlsVersionName, TlsVersionsOutcome, TlsVersionsRequest } from "./hop-types.js";
import type { ResolvedAddress } from "./resolver.js";
import { effectivePort, hostOf, screenUrl } from "./policy/target-policy.js";

export type { TlsVersionAttempt, TlsVersionName, TlsVersionsOutcome, TlsVersionsRequest } from "./hop-types.js";

/** The versions tried, newest first, as Node names them (TLSSocket.getProtocol()). */
export const TLS_VERSIONS: readonly TlsVersionName[] = ["TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1"];

/**
 * One limited context per version, built the first time a diagnostic asks.
 * Node's own trust store, never SITEDIAG_CA_FILE's: a handshake is accepted
 * whatever its certificate (that is the first request's verdict), and four
 * contexts with the roots parsed again cost 300 ms of this thread (measured
 * on Node 20), against under 10 ms without.
 */
export type VersionContexts = () => ReadonlyMap<TlsVersionName, SecureContext | null>;

/**
 * OpenSSL's security level 1 (its default) refuses TLS 1.0 and 1.1 outright
 * or their SHA-1 signatures (ERR_SSL_LEGACY_SIGALG_DISALLOWED_OR_UNSUPPORTED
 * after the server already agreed): a legacy version is offered at level 0,
 * so what is measured is the server's choice, not ours.
 */
const LEGACY_CIPHERS = "DEFAULT@SECLEVEL=0";

/** OpenSSL's own refusal to offer a version, before any byte of a ClientHello leaves. */
const LOCAL_REFUSALS: ReadonlySet<string> = new Set([
  "ERR_SSL_NO_PROTOCOLS_AVAILABLE",
  "ERR_SSL_NO_CIPHERS_AVAILABLE",
  "ERR_SSL_NO_CIPHER_MATCH",
]);

export function versionContexts(): VersionContexts {
  let built: ReadonlyMap<TlsVersionName, SecureContext | null> | null = null;
  return () => {
    built ??= new Map(TLS_VERSIONS.map((version) => [version, limitedContext(version)] as const));
    return built;
  };
}

/** Null when this OpenSSL cannot be set to the version at all. */
function limitedContext(version: TlsVersionName): SecureContext | null {
  const legacy = version === "TLSv1" || version === "TLSv1.1";
  try {
    return createSecureContext({ minVersion: version, maxVersion: version, ...(legacy ? { ciphers: LEGACY_CIPHERS } : {}) });
  } catch {
    return null;
  }
}

/** The four handshakes; never throws. */
export async function runTlsVersions(request: TlsVersionsRequest, deps: HopDeps, contexts: VersionContexts): Promise<TlsVersionsOutcome> {
  const screened =
    request.url.protocol === "https:"
      ? screenUrl(request.url, request.ports, deps.addresses)
      : refusal("INPUT_SCHEME", "Only an https URL has TLS versions to try");
  if (screened !== null) return { kind: "refused", refusal: screened };
  const deadline = createDeadline();
  const onOuterAbort = () => deadline.abort();
  const timer = setTimeout(() => deadline.abort(), request.timeoutMs);
  request.signal?.addEventListener("abort", onOuterAbort, { once: true });
  if (request.signal?.aborted === true) deadline.abort();
  try {
    const pinned = await approvedAddress(request, deps, deadline.signal);
    if ("rule" in pinned) return { kind: "refused", refusal: pinned };
    const attempts = await Promise.all(
      TLS_VERSIONS.map((version) => handshakeWith(version, contexts().get(version) ?? null, pinned, request.url, deps, deadline.signal)),
    );
    return { kind: "tried", address: pinned.address, attempts };
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onOuterAbort);
  }
}

/** The address, once the name's every answer passed the policy (as any hop judges them) and it is among them. */
async function approvedAddress(request: TlsVersionsRequest, deps: HopDeps, signal: AbortWatch): Promise<ResolvedAddress | PolicyRefusal> {
  const host = hostOf(request.url);
  const literal = isIP(host);
  if (literal !== 0) return { address: host, family: literal === 6 ? 6 : 4 };
  const resolution = await deps.resolver.resolve(host, signal);
  const noAddress: PolicyRefusal = {
    rule: "no_address",
    code: causeInfo("ENODATA", "dns").code,
    reason: `Target ${host} no longer resolves to ${request.address}`,
  };
  if (!resolution.ok) return noAddress;
  for (const { address } of resolution.addresses) {
    const verdict = deps.addresses.judge(address);
    if (!verdict.allowed)
      return refusal(
        "INPUT_RESOLVES_NON_PUBLIC",
        `Target ${host} resolves to ${verdict.address}, which is ${refusedAddressDetail(verdict)}`,
        verdict.range,
      );
  }
  return resolution.addresses.find(({ address }) => address === request.address) ?? noAddress;
}

async function handshakeWith(
  version: TlsVersionName,
  context: SecureContext | null,
  pinned: ResolvedAddress,
  url: URL,
  deps: HopDeps,
  signal: AbortWatch,
): Promise<TlsVersionAttempt> {
  const none = { version, cipher: null, alpn: null, tlsMs: null };
  if (context === null)
    return Object.assign({}, none, { outcome: "not_offered_locally" as const, code: null, cause: null, reason: NOT_OFFERED_REASON });
  const trace = startTrace(now());
  try {
    const connection = await openPinned(
      { addresses: [pinned], port: effectivePort(url), tls: true, hostname: hostOf(url), secureContext: context },
      trace,
      deps.addresses,
      signal,
    );
    // Nothing is written: the handshake is all this asks of the server.
    connection.socket.destroy();
  } catch (error) {
    // A certificate that failed verification still completed the handshake: the version was accepted.
    if (trace.tls === null) return failedAttempt(version, error, trace.phase, signal.aborted, now() - trace.startedAt);
  }
  const tls = trace.tls;
  const tlsMs =
    trace.tlsDoneAt !== null && trace.tcpConnectedAt !== null ? Math.round((trace.tlsDoneAt - trace.tcpConnectedAt) * 10) / 10 : null;
  return {
    version,
    outcome: "accepted",
    cipher: tls?.cipher ?? null,
    alpn: tls?.alpn ?? null,
    code: null,
    cause: null,
    reason: null,
    tlsMs,
  };
}

const NOT_OFFERED_REASON = "This server's OpenSSL cannot offer this version, so nothing was sent";

function failedAttempt(
  version: TlsVersionName,
  error: unknown,
  phase: FailureStage,
  aborted: boolean,
  elapsedMs: number,
): TlsVersionAttempt {
  const cause = errorCodeOf(error);
  const none = { version, cipher: null, alpn: null, tlsMs: null };
  if (!aborted && LOCAL_REFUSALS.has(cause))
    return Object.assign({}, none, { outcome: "not_offered_locally" as const, code: null, cause, reason: NOT_OFFERED_REASON });
  const failure = describeFailure({ phase, code: cause, aborted, elapsedMs, remoteAddress: null });
  const refused = phase === "tls" && !aborted;
  return Object.assign({}, none, {
    outcome: refused ? ("refused" as const) : ("failed" as const),
    code: failureCode(failure),
    cause: failure.cause,
    reason: failure.reason,
  });
}
