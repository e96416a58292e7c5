import { connect as netConnect, type LookupFunction, type Socket } from "node:net";
import { connect as tlsConnect, type SecureContext, type TLSSocket } from "node:tls";
import { isIP } from "node:net";
import type { AddressPolicy } from "../policy/address-policy.js";
import type { HopTrace } from "../hop-trace.js";
import { formatIp, parseIp } from "../policy/ip-address.js";
import type { ResolvedAddress } from "../resolver.js";
import { leafForNameCheck } from "./name-check-leaf.js";
import { peerChainOf } from "./peer-chain.js";
import { describeTls, describeVerifiedLeaf } from "./tls-detail.js";
import { stapledOcspOf } from "./stapled-ocsp.js";
import { verificationFailure } from "./tls-verification.js";
import { guarded, type InternalProbeError } from "../failure.js";
import { type AbortWatch, now } from "../clock.js";

/** RFC 8305 §5: start the next address when the current one has not connected within 250 ms. */
export const CONNECTION_ATTEMPT_DELAY_MS = 250;

export interface DialPlan {
  /** Approved addresses, in the order to try them. */
  readonly addresses: readonly ResolvedAddress[];
  readonly port: number;
  readonly tls: boolean;
  /** The URL's host: SNI and certificate name check. */
  readonly hostname: string;
  /**
   * Built once and shared by every connection (createProber); undefined has
   * Node build one per connection, with its default trust store.
   */
  readonly secureContext: SecureContext | undefined;
  /** What of the handshake's certificates to read; "leaf" when absent. */
  readonly certificates?: CertificateReading;
}

/**
 * What of a handshake's certificates a hop reads (its TlsDetail), cheapest
 * first. Each step reads what the answer that asked for it uses, and no more
 * (figures: docs/benchmarks.md, issue 36).
 */
export type CertificateReading =
  /** Only whether it verified: the hop keeps no TlsDetail (is-site-down without details says nothing of the certificate). */
  | "verdict"
  /** The session, the leaf and the stapled OCSP answer: what redirect-check's warnings read. */
  | "leaf"
  /** Also every certificate of the chain and the link that failed (details). */
  | "chain";

/** Raised by the connector for a failure of its own making (not the OS's, not OpenSSL's). */
export class ConnectorError extends Error {
  constructor(
    readonly code: "REMOTE_ADDRESS_MISMATCH" | "ABORTED",
    message: string,
  ) {
    super(message);
    this.name = "ConnectorError";
  }
}

/** The protocols offered in ALPN, in order of preference, as browsers offer them. */
export const ALPN_OFFER: readonly string[] = ["h2", "http/1.1"];

/** ALPN_OFFER as the wire writes it (length-prefixed names), made once: given an array, Node encodes it on every connection. */
const ALPN_WIRE = Buffer.concat(ALPN_OFFER.map((name) => Buffer.concat([Buffer.from([name.length]), Buffer.from(name, "latin1")])));

/** A pinned, checked (and for HTTPS verified) connection, with the protocol the server chose. */
export interface PinnedConnection {
  readonly socket: Socket | TLSSocket;
  /** "h2" only when the server chose it in ALPN; a server that chose nothing speaks HTTP/1.1. */
  readonly protocol: "http/1.1" | "h2";
}

/**
 * The probe's only dial: the approved addresses only (the name is never
 * resolved again, so an answer that changes after the check, DNS rebinding,
 * is never seen), the remote-address tripwire, then TLS verified against the
 * URL's host. Errors are the OS's, OpenSSL's or ConnectorError.
 */
export async function openPinned(plan: DialPlan, trace: HopTrace, policy: AddressPolicy, signal: AbortWatch): Promise<PinnedConnection> {
  const socket = await establish(plan, trace, policy, signal);
  trace.phase = "http";
  const chosen = plan.tls ? (socket as TLSSocket).alpnProtocol : false;
  return { socket, protocol: chosen === "h2" ? "h2" : "http/1.1" };
}

async function establish(plan: DialPlan, trace: HopTrace, policy: AddressPolicy, signal: AbortWatch): Promise<Socket | TLSSocket> {
  trace.phase = "connect";
  trace.connectStartedAt = now();
  const socket = await dialFirst(plan, trace, signal);
  trace.tcpConnectedAt = now();
  checkRemote(socket, trace, policy);
  if (!plan.tls) return socket;
  trace.phase = "tls";
  return handshake(socket, plan, trace, signal);
}

/** The last tripwire: the kernel's idea of the peer must be the address we approved, and still allowed. */
function checkRemote(socket: Socket, trace: HopTrace, policy: AddressPolicy): void {
  const remote = socket.remoteAddress === undefined ? null : parseIp(socket.remoteAddress);
  const approved = trace.remote === null ? null : parseIp(trace.remote.address);
  const same = remote !== null && approved !== null && remote.family === approved.family && remote.value === approved.value;
  if (!same || !policy.judge(formatIp(remote)).allowed) {
    socket.destroy();
    throw new ConnectorError(
      "REMOTE_ADDRESS_MISMATCH",
      `connected to ${socket.remoteAddress ?? "an unknown address"}, not ${trace.remote?.address ?? "an approved address"}`,
    );
  }
}

/**
 * The four options net.Socket sets itself, with the values it sets. Its
 * constructor copies the options with a spread and then adds these; on Node
 * 20 (V8 11.3) adding fields to a spread copy takes a slow path, nearly all
 * of what the constructor costs a dial. Given here, they are stores over
 * fields the copy already has. Node 22 and 24 are fast either way (figures:
 * docs/benchmarks.md).
 */
const FIELDS_NODE_SETS = { allowHalfOpen: false, emitClose: false, autoDestroy: true, decodeStrings: false } as const;

/** A hostname lookup that can only ever be asked for nothing: every dial is to an IP literal. */
const noLookup: LookupFunction = (hostname, _options, callback) => {
  callback(new ConnectorError("REMOTE_ADDRESS_MISMATCH", `refused to resolve ${hostname} while connecting`), "", 4);
};

/** Staggered attempts over the approved addresses (Happy Eyeballs); the first to connect wins. */
function dialFirst(plan: DialPlan, trace: HopTrace, signal: AbortWatch): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const attempts = new Set<Socket>();
    let next = 0;
    let settled = false;
    // Built only when needed: an error captures a stack, and almost every dial succeeds.
    let lastError: unknown;
    let timer: NodeJS.Timeout | undefined;

    const finish = (error: unknown, winner?: Socket) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      for (const socket of attempts) if (socket !== winner) socket.destroy();
      if (winner === undefined) reject(error);
      else resolve(winner);
    };
    const onAbort = () => finish(new ConnectorError("ABORTED", "the hop was aborted"));

    const startNext = () => {
      clearTimeout(timer);
      const target = plan.addresses[next++];
      if (target === undefined) {
        if (attempts.size === 0) finish(lastError ?? new ConnectorError("ABORTED", "no address to dial"));
        return;
      }
      trace.remote = { address: target.address, family: target.family };
      const socket = netConnect({
        host: target.address,
        port: plan.port,
        family: target.family,
        lookup: noLookup,
        noDelay: true,
        ...FIELDS_NODE_SETS,
      });
      attempts.add(socket);
      const defect = (error: InternalProbeError) => finish(error);
      const onError = guarded((error: Error) => {
        if (settled) return;
        attempts.delete(socket);
        lastError = error;
        startNext();
      }, defect);
      socket.once(
        "connect",
        guarded(() => {
          trace.remote = { address: target.address, family: target.family };
          quietAfterUse(socket, onError);
          finish(null, socket);
        }, defect),
      );
      socket.on("error", onError);
      // The next attempt's timer only when there is a next address: one timer less on the common single-address dial.
      if (next < plan.addresses.length) timer = setTimeout(startNext, CONNECTION_ATTEMPT_DELAY_MS);
    };

    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    startNext();
  });
}

/**
 * The stapled OCSP answer, read as the server shows it; no responder is ever
 * asked (stapled-ocsp.ts). tls.connect passes it to the TLSSocket it makes;
 * @types/node lists it on TLSSocket's options only.
 */
const ASK_FOR_STAPLE = { requestOCSP: true } as const;

function handshake(socket: Socket, plan: DialPlan, trace: HopTrace, signal: AbortWatch): Promise<TLSSocket> {
  const reading = plan.certificates ?? "leaf";
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({
      socket,
      // RFC 6066 forbids an IP address as SNI; the name check then uses `host`.
      ...(isIP(plan.hostname) === 0 ? { servername: plan.hostname } : {}),
      host: plan.hostname,
      ...(plan.secureContext === undefined ? {} : { secureContext: plan.secureContext }),
      ALPNProtocols: ALPN_WIRE,
      // Asked on every hop, as browsers ask: the handshake is the same whatever the hop reads of it.
      ...ASK_FOR_STAPLE,
      // Verified below, before a byte is written: the chain a failed
      // verification saw is still readable then (told apart: an incomplete
      // chain from an untrusted issuer), which it is not once Node rejects.
      rejectUnauthorized: false,
    });
    // Node's name check reads the leaf alone (name-check-leaf.ts); whatever reads the chain below has all of it.
    const nameCheck = leafForNameCheck(secure);
    const onAbort = () => {
      secure.destroy();
      reject(new ConnectorError("ABORTED", "the hop was aborted"));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    let done = false;
    // Emitted during the handshake, before secureConnect: null when nothing was stapled. Kept as bytes; read below only when the hop reads the leaf.
    let stapled: Buffer | null = null;
    const onStaple = (answer: Buffer | null) => (stapled = answer);
    if (reading !== "verdict") secure.once("OCSPResponse", onStaple);
    /** Ends the handshake's promise once: with the socket, or with why not (the socket destroyed). */
    const settle = (error: unknown) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      secure.off("OCSPResponse", onStaple);
      quietAfterUse(secure, onError);
      if (error === null) return resolve(secure);
      secure.destroy();
      reject(error);
    };
    secure.once(
      "secureConnect",
      guarded(() => {
        nameCheck.done();
        // The handshake is over whether or not the certificate passes: a failed verification still has its tls time.
        trace.tlsDoneAt = now();
        // The verdict alone: the chain is read only to name a failure (tls-verification.ts).
        if (reading === "verdict") return settle(secure.authorized ? null : verificationFailure(secure, peerChainOf(secure)));
        // Without details, a verified handshake with nothing stapled is described by its leaf alone, the one Node's
        // name check already read: the hop's warnings read nothing above it, and reading the chain copies every
        // certificate (11-15% of an HTTPS redirect-check's CPU on Node 20, 3-7% on 22 and 24: docs/benchmarks.md).
        const leafDer = nameCheck.leafDer();
        if (reading === "leaf" && secure.authorized && leafDer !== undefined && (stapled === null || stapled.length === 0)) {
          trace.tls = describeVerifiedLeaf(secure, leafDer);
          return settle(null);
        }
        // Read once, for every use below, and never with getPeerX509Certificate(), which leaks the chain (peer-chain.ts).
        // Nor kept from Node's own name check when that read the chain (a checkServerIdentity of ours holding its
        // certificate): that leaked about 0.26 MiB a hop of a 72-intermediate chain on Node 22 and 24
        // (test/load/peer-certificate-memory.test.ts). The leaf alone links to nothing.
        const chain = peerChainOf(secure);
        const refused = verificationFailure(secure, chain);
        // Kept whatever the verdict: the certificate a failed verification saw
        // is what a person debugging the site needs (details), and reading it
        // writes nothing to the connection.
        trace.tls = describeTls(secure, chain, refused?.code ?? null, stapledOcspOf(stapled, chain), reading === "chain");
        settle(refused);
      }, settle),
    );
    const onError = guarded(settle, settle);
    secure.on("error", onError);
  });
}

/** An error after a socket's part is over: what its new owner (the exchange, or closing) reads of it, not ours. */
const AFTER_USE: (error: Error) => void = () => undefined;

/**
 * Hands the socket on holding nothing of this dial or handshake: a listener
 * left on it keeps its whole scope (the hop's trace, its plan, the leaf Node
 * checked) reachable from the socket, and Node's native wrappers keep a
 * destroyed socket alive through every scavenge until a mark-compact, so all
 * of it was promoted with every HTTPS hop (figures: docs/benchmarks.md,
 * issue 36). The shared no-op goes on first: the socket is never without an
 * error listener.
 */
function quietAfterUse(socket: Socket, listener: (error: Error) => void): void {
  socket.on("error", AFTER_USE);
  socket.off("error", listener);
}
