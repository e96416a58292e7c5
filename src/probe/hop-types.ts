import type { AbortWatch } from "./clock.js";
import type { CapturedHead } from "./http/head-capture.js";
import type { HeaderMap } from "./http/header-map.js";
import type { PolicyRefusal } from "../shared/failures.js";
import type { ProbeFailure } from "./failure.js";
import type { Overload } from "./overload.js";
import type { StapledOcsp } from "./connect/stapled-ocsp.js";
import type { NameResolution } from "./name-resolution.js";

/** Which ports a diagnostic may visit. */
export type PortRule =
  /** Only these ports (redirect-check: 80 and 443 by default). */
  | { readonly kind: "only"; readonly ports: readonly number[] }
  /** Any port except the WHATWG Fetch "bad ports" (is-site-down). */
  | { readonly kind: "fetch-safe" };

/**
 * A connection the prober kept open after a redirect to the same origin, for
 * the hop that follows it in the same check (kept-connections.ts). Plain data,
 * so a diagnostic's result never holds a socket: the keeper of the prober that
 * made it holds the connection, and a check runs whole on that prober's thread.
 */
export interface ConnectionHandle {
  readonly id: number;
}

export interface HopRequest {
  readonly url: URL;
  readonly method: "GET" | "HEAD";
  /** Hard limit from DNS through the response head. */
  readonly timeoutMs: number;
  readonly ports: PortRule;
  /** An outer deadline (the whole trace's budget, a shutting-down server). */
  readonly signal?: AbortWatch;
  /**
   * Body bytes to read after the head (decoded from chunked), within the
   * hop's own deadline, at most 1 MiB; 0 or undefined reads no body.
   */
  readonly bodyPrefixBytes?: number;
  /** A Cookie header value from the check's own jar; never logged. */
  readonly cookie?: string;
  /**
   * When the hop was asked for, on the shared clock (shared-clock.ts). Set by
   * a check for its first request (when the call arrived, or when it was
   * handed to a probe thread). A hop that starts more than
   * LATE_START_GRACE_MS after it (a burst queued on a probe thread, a thread
   * booting) is `overloaded` before it sends anything; one that starts within
   * it gets its whole timeoutMs from its start. The wait is not in its span.
   */
  readonly askedAt?: number;
  /**
   * The connection the previous hop of this check kept (its response's
   * keptConnection): used when it is for this URL's origin, still open and
   * one of the addresses this hop's own resolution approved; otherwise the hop
   * dials as usual.
   */
  readonly reuse?: ConnectionHandle;
  /**
   * Keep the connection after a final answer too (not a redirect), for one
   * more request of this check to the same URL: redirect-check's GET of its
   * final page, with details. Kept under the same rules as a redirect's; if
   * nothing asks for it, the keeper closes it after its idle time.
   */
  readonly keepAfterAnswer?: boolean;
  /**
   * Keep the response's field lines for people (HopResponse.headFields) and
   * describe the whole certificate chain (TlsDetail.chain): details asked
   * for them. Without it nothing more is read or kept.
   */
  readonly captureHead?: boolean;
  /**
   * What of an HTTPS handshake's certificates to read (connector.ts),
   * "leaf" when absent; captureHead reads the whole chain whatever this
   * says. "verdict": only whether it verified, and the hop's `tls` is null
   * (is-site-down without details, whose answer says nothing of it).
   */
  readonly certificates?: "verdict" | "leaf";
  /**
   * Dial only the addresses of this family (details' request over the family
   * Happy Eyeballs did not pick). Every answer of the name is still judged by
   * the address policy first; a name with no address of this family is the
   * `no_address` refusal, and nothing is sent.
   */
  readonly family?: 4 | 6;
  /**
   * Dial only this address, one of the name's answers (details' request to
   * each address, address-survey.ts). Every answer is still judged by the
   * address policy first; an address no longer among them is the
   * `no_address` refusal, and nothing is sent.
   */
  readonly address?: string;
  /**
   * Details asked: the outcome carries the record of the name's resolution
   * (name-resolution.ts), its CNAME chain walked with extra queries, bounded,
   * beside the dial and outside the DNS phase (cname-chain.ts). Without it
   * nothing of the lookup is kept beyond its addresses.
   */
  readonly describeResolution?: boolean;
  /** The User-Agent to send instead of the prober's own (a crawler's, issue 39); the prober's when undefined. */
  readonly userAgent?: string;
  /**
   * With describeResolution, for a diagnostic's first host: the name's DNSSEC
   * state and Extended DNS Errors read with one more query, the DO bit set,
   * to the same servers (dnssec-query.ts); a DNS failure they explain is
   * named by them (src/shared/failures.ts, the EDE_ rows).
   */
  readonly readDnssec?: boolean;
}

/**
 * Milliseconds per phase of one hop, multiples of 0.1 ms that add up to
 * totalMs exactly: dns + connect + tls + waiting + receiving + other
 * (hop-timings.ts). Null for a phase that did not happen: tls on http, dns
 * for an IP literal, connect and tls on a reused connection, and on a failed
 * hop every phase after the one it failed in (which runs to the failure). The
 * one shape of a request's timings: the probe builds it once and details, the
 * page and the CLI show it as it is.
 */
export interface HopTimings {
  /** From the hop's start to its response head read (or its failure). */
  readonly totalMs: number;
  readonly dnsMs: number | null;
  readonly connectMs: number | null;
  readonly tlsMs: number | null;
  /** From the connection ready (TLS done, or connected; the request written on a kept one) to the first byte of the answer, or to the failure when none came. */
  readonly waitingMs: number | null;
  /** From the first byte to the whole response head. */
  readonly receivingMs: number | null;
  /** What no phase accounts for: screening, the step from DNS to the dial, the request on a kept connection. */
  readonly otherMs: number;
  /** From the request written to the first byte (time to first byte); overlaps waiting, so it is no column of the sum. */
  readonly firstByteMs: number | null;
}

/**
 * The server's leaf certificate, as people read it; kept also when verification failed.
 * Text fields have control characters and bidi overrides replaced by U+FFFD and
 * at most CERTIFICATE_TEXT.maxChars characters (src/shared/limits.ts).
 */
export interface PeerCertificate {
  /** Common name of the subject; "" when it has none. */
  readonly subject: string;
  /** Common name and organisation of the issuer, comma-separated. */
  readonly issuer: string;
  /** The subject's whole distinguished name on one line ("C=.., O=.., CN=.."), as the CLI shows it. */
  readonly subjectName: string;
  /** The issuer's whole distinguished name on one line. */
  readonly issuerName: string;
  /** As the certificate lists them: "DNS:example.com", "IP Address:192.0.2.1"; the first CERTIFICATE_TEXT.maxAltNames; [] when none or undecodable. */
  readonly subjectAltNames: readonly string[];
  /** ISO-8601; "" when the certificate's date cannot be read (Node's "Bad time value"). */
  readonly validFrom: string;
  /** ISO-8601; "" when the certificate's date cannot be read. */
  readonly validTo: string;
  /** Upper-case hex. */
  readonly serialNumber: string;
  /** Colon-separated upper-case hex. */
  readonly fingerprintSha256: string;
  /**
   * Certificates the server sent, leaf included; null when the hop read the
   * leaf alone (no details, a verified handshake, nothing stapled: connector.ts).
   */
  readonly chainLength: number | null;
}

/** The TLS session of one hop, as far as the handshake got: on its response, and on its failure when the handshake completed (a certificate that failed verification). */
export interface TlsDetail {
  /** Null when the handshake did not complete. */
  readonly protocol: string | null;
  readonly cipher: string | null;
  /** What the server chose in ALPN; null when it chose nothing. */
  readonly alpn: string | null;
  /** Null when the server sent none (or the handshake failed before it did). */
  readonly certificate: PeerCertificate | null;
  /** Node's verification code (CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, ...); null when it verified. */
  readonly verifyError: string | null;
  /** The OCSP answer stapled to the handshake, as the server shows it (stapled-ocsp.ts); status "none" when nothing was stapled. */
  readonly ocsp: StapledOcsp;
  /**
   * With details (HopRequest.captureHead): the chain as Node links it, leaf
   * first, each certificate followed by its issuer, the first
   * CHAIN_LIMITS.maxCertificates (chain-certificate.ts), the rest counted
   * (verification.more). [] without details.
   */
  readonly chain: readonly ChainCertificate[];
  /** With details: which link failed verification and why; null without details. */
  readonly verification: ChainVerification | null;
}

/**
 * One certificate of the chain a handshake saw. Text fields are escaped and
 * bounded as PeerCertificate's; "" (or 0) where the certificate does not say
 * it readably.
 */
export interface ChainCertificate {
  /** Common name of the subject. */
  readonly subject: string;
  /** The subject's whole distinguished name on one line. */
  readonly subjectName: string;
  /** The issuer's whole distinguished name on one line. */
  readonly issuerName: string;
  /** The first CHAIN_LIMITS.maxAltNames entries ("DNS:example.com"). */
  readonly subjectAltNames: readonly string[];
  /** Entries past those in subjectAltNames. */
  readonly subjectAltNamesMore: number;
  /** ISO-8601; "" when unreadable. */
  readonly validFrom: string;
  /** ISO-8601; "" when unreadable. */
  readonly validTo: string;
  /** Node's asymmetricKeyType: rsa, rsa-pss, ec, ed25519, ...; "" when Node cannot read the key. */
  readonly keyType: string;
  /** Bits: the RSA modulus, the curve's size; 0 when unknown. */
  readonly keySize: number;
  /** The named curve of an EC key (prime256v1, secp384r1); "" otherwise. */
  readonly keyCurve: string;
  /** The issuer's signature algorithm (sha256WithRSAEncryption, ecdsa-with-SHA256, or the OID); "" when unreadable. */
  readonly signatureAlgorithm: string;
  /** Colon-separated upper-case hex. */
  readonly fingerprintSha256: string;
  /** Subject and issuer are the same name: a root, or a self-signed leaf. */
  readonly selfIssued: boolean;
}

/** Why a link failed, in words; `other` for a code no link can be told for (the code is TlsDetail.verifyError). */
export type ChainFailureReason =
  | "not yet valid"
  | "expired"
  | "missing intermediate"
  | "self-signed root sent"
  | "self-signed certificate"
  | "name mismatch"
  | "other";

/** The verdict on the chain, and the link it fell at. */
export interface ChainVerification {
  readonly verified: boolean;
  /** Index into `chain` (0 is the leaf) of the link that failed; null when verified or no link can be told. */
  readonly failedAt: number | null;
  /** Null when verified. */
  readonly reason: ChainFailureReason | null;
  /** Linked certificates past those in `chain` (the walk stops at MAX_CHAIN_WALK). */
  readonly more: number;
}

/** What a failed hop still knows: where it went, how far it got, the certificate it saw. */
export interface HopFailureTrace {
  readonly remoteFamily: 4 | 6 | null;
  /** The phases it completed; totalMs is the failure's elapsedMs. */
  readonly timings: HopTimings;
  readonly tls: TlsDetail | null;
  /** It failed on the connection the previous hop kept (after it had answered; one closed unanswered is retried on a new one). */
  readonly connectionReused: boolean;
  /** How the host's name resolved, a DNS failure included, when the request said describeResolution; absent for an IP-literal host. */
  readonly resolution?: NameResolution;
}

export interface HopResponse {
  /** The URL requested, serialised. */
  readonly url: string;
  /** The method sent. */
  readonly method: "GET" | "HEAD";
  /** The protocol the response came over: "2" when the server chose h2 in ALPN. */
  readonly httpVersion: "1.0" | "1.1" | "2";
  readonly status: number;
  /** The server's reason phrase, else the standard phrase for the status. */
  readonly statusText: string;
  /**
   * Lower-cased names; repeated headers joined as arrays. Without a prototype
   * where it is made; an ordinary object once it crossed a thread: read it by
   * own property (headerValue, header-map.ts), never headers[name].
   */
  readonly headers: HeaderMap;
  /**
   * The head's field lines as sent (names as spelled, in order, the first
   * 64 KiB, Set-Cookie values redacted to the cookie's name): only when the
   * request said captureHead; null otherwise.
   */
  readonly headFields: CapturedHead | null;
  /** The raw Location header, when present. */
  readonly locationHeader: string | null;
  /** Location resolved against `url`; null when absent or unparsable. */
  readonly location: string | null;
  readonly remoteAddress: string;
  readonly remoteFamily: 4 | 6;
  readonly timings: HopTimings;
  /** The TLS session and leaf certificate; present for HTTPS hops, unless the hop read only the verdict (HopRequest.certificates). */
  readonly tls: TlsDetail | null;
  /**
   * The first HopRequest.bodyPrefixBytes of the body (less when the body is
   * shorter or the deadline came first); null when no body was asked for or
   * its framing could not be trusted. Empty for HEAD, 1xx, 204 and 304.
   */
  readonly bodyPrefix: Uint8Array | null;
  /** True when the request went over the connection the previous hop kept (no connect, no TLS handshake). */
  readonly connectionReused: boolean;
  /**
   * Set when this response is a redirect to the same origin (or any final
   * answer, when the request said keepAfterAnswer) and the connection can
   * carry the next request (over HTTP/1.1: the server said keep-alive, a body
   * with a known end; or an HTTP/2 session): pass it as the next hop's `reuse`.
   */
  readonly keptConnection: ConnectionHandle | null;
  /** How the host's name resolved for this request, when it said describeResolution; absent for an IP-literal host. */
  readonly resolution?: NameResolution;
}

/**
 * Whatever the target does, a hop resolves: it answers, fails, or is refused by
 * policy before any packet is sent. It is `overloaded` when our own capacity
 * failed it (it started too late for its full time, or its probe thread
 * died): no verdict on the target. It rejects only on a defect of our own.
 */
export type HopOutcome =
  | { readonly kind: "response"; readonly response: HopResponse }
  | { readonly kind: "failure"; readonly failure: ProbeFailure; readonly trace: HopFailureTrace }
  /** `resolution`: when the refusal came after DNS (a non-public answer), what the name resolved to. */
  | { readonly kind: "refused"; readonly refusal: PolicyRefusal; readonly resolution?: NameResolution }
  | { readonly kind: "overloaded"; readonly overload: Overload };

/**
 * When a hop ran, read by the thread that ran it on a clock every thread of the
 * process shares: milliseconds since the epoch, fractional
 * (performance.timeOrigin + performance.now()). The diagnostics report times
 * from these spans, so waiting on another thread's loop is never counted.
 */
export interface HopSpan {
  readonly startedAt: number;
  readonly endedAt: number;
}

/** A hop's outcome with the span it took on the thread that ran it. */
export type TimedHopOutcome = HopOutcome & { readonly span: HopSpan };

/** The one thing in the project that opens outbound connections. */
export interface Prober {
  /**
   * Checks that need no DNS: length, scheme, credentials, port, and IP-literal
   * hosts. Null when the URL may go on to resolution. `hop` repeats these.
   */
  screen(url: URL, ports: PortRule): PolicyRefusal | null;
  /** One request, to an address approved by the policy and pinned for the connection. Rejects only on a defect. */
  hop(request: HopRequest): Promise<TimedHopOutcome>;
  /**
   * Details' TLS versions (tls-versions.ts): one handshake limited to each
   * version, to one approved address, nothing written after it. Rejects only on a defect.
   */
  tlsVersions(request: TlsVersionsRequest): Promise<TlsVersionsOutcome>;
  /** Releases resolvers and anything else held. */
  close(): Promise<void>;
}

export interface ProberOptions {
  /** CIDRs allowed despite not being public (SITEDIAG_ALLOW_CIDRS). */
  readonly allowCidrs: readonly string[];
  /** DNS servers to use instead of the system resolver (SITEDIAG_DNS_SERVERS). */
  readonly dnsServers: readonly string[];
  /** Hosts file consulted before DNS (SITEDIAG_HOSTS_FILE); none when undefined. */
  readonly hostsFile?: string | undefined;
  /** Largest response head read (SITEDIAG_MAX_RESPONSE_HEAD_BYTES); 256 KiB, as browsers, when undefined. */
  readonly maxResponseHeadBytes?: number | undefined;
  /**
   * Keep a same-origin redirect's connection for the check's next request
   * (SITEDIAG_REUSE_CONNECTIONS); true when undefined. False: every request
   * dials, so connect and TLS are in every hop's time.
   */
  readonly reuseConnections?: boolean | undefined;
  /** Extra PEM CA certificates, trusted beside Node's defaults. */
  readonly ca?: string | undefined;
  readonly userAgent: string;
}

// Details' version-limited handshakes (tls-versions.ts).

/** A TLS version as Node names it (TLSSocket.getProtocol()); TLSv1 is TLS 1.0. */
export type TlsVersionName = "TLSv1.3" | "TLSv1.2" | "TLSv1.1" | "TLSv1";

export interface TlsVersionsRequest {
  /** An https URL: its host is the SNI and the name verified; its port is dialled. */
  readonly url: URL;
  /** The address to dial: one of the name's answers (the first request's). */
  readonly address: string;
  /** One deadline for all four handshakes, which run at once. */
  readonly timeoutMs: number;
  readonly ports: PortRule;
  readonly signal?: AbortWatch;
}

/**
 * One version's handshake: `accepted` (it completed, whatever the certificate
 * check said), `refused` (the server ended it: an alert, a reset, a version
 * it answered with another), `failed` (it never got to TLS: no connection, our
 * deadline), or `not_offered_locally` (this process's OpenSSL cannot offer
 * the version at all, so nothing about the server is known).
 */
export interface TlsVersionAttempt {
  readonly version: TlsVersionName;
  readonly outcome: "accepted" | "refused" | "failed" | "not_offered_locally";
  /** The cipher suite agreed; null unless accepted. */
  readonly cipher: string | null;
  /** What the server chose in ALPN (we offer h2 and http/1.1); null when it chose nothing or the handshake did not complete. */
  readonly alpn: string | null;
  /** The failure table's code (src/shared/failures.ts); null when accepted. */
  readonly code: string | null;
  /** OpenSSL's or the system's own code (ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION, ECONNRESET, ...); null when accepted. */
  readonly cause: string | null;
  /** In words; null when accepted. */
  readonly reason: string | null;
  /** The handshake's time in ms (multiples of 0.1); null unless accepted. */
  readonly tlsMs: number | null;
}

export type TlsVersionsOutcome =
  | { readonly kind: "tried"; readonly address: string; readonly attempts: readonly TlsVersionAttempt[] }
  /** Screened out, a non-public answer, or the address no longer among the answers (`no_address`): nothing was sent. */
  | { readonly kind: "refused"; readonly refusal: PolicyRefusal };
