import { X509Certificate } from "node:crypto";
import type { TLSSocket } from "node:tls";

/**
 * The certificates a handshake's peer sent, read so that nothing outlives the
 * connection. Node's getPeerX509Certificate() takes each certificate past the
 * leaf out of the connection's chain, copies it, and never frees the original
 * (Node 20.20, 22.23 and 24.21 alike): every HTTPS hop leaked what the server
 * sent beside its leaf, more the longer the chain (docs/benchmarks.md),
 * never given back after full collections. getPeerCertificate(true)
 * copies the chain instead and leaks nothing. The leaf is kept as its DER:
 * its record comes from the thread's readings (tls-detail.ts), and only a
 * failure's wording parses it again (parsedLeaf).
 */
export interface PeerChain {
  /** The leaf's DER as Node handed it out; undefined when the server sent none or Node cannot hand it out. */
  readonly leafDer: Buffer | undefined;
  /**
   * The leaf and the certificates linked above it, a root not counted (one
   * the server sent and one found in the trust store look the same here):
   * what the server sent for its chain, counted up to MAX_CHAIN_WALK. 0 without a leaf.
   */
  readonly length: number;
  /** The leaf links to no issuer certificate but itself: its issuer was neither sent nor found in the trust store. */
  readonly leafAlone: boolean;
  /**
   * Each certificate of the chain as Node links it, leaf first, each followed
   * by its issuer, the root included, at most MAX_CHAIN_WALK. Node re-links
   * what the server sent by issuer (X509_check_issued over the sent list),
   * then adds issuers from the trust store: this is issuing order, never the
   * order the server sent, and a sent certificate that issues none of the
   * chain is not in it (docs/probe.md).
   */
  readonly links: readonly PeerLink[];
  /** The last link is its own issuer (a root, or a self-signed leaf): Node links it to itself. */
  readonly topSelfIssued: boolean;
  /** The DER of the leaf's issuer as Node linked it (sent, or found in the trust store); undefined for a self-linked leaf or none. */
  readonly issuer: Buffer | undefined;
}

/** One linked certificate: its DER, and the dates Node already printed for it. */
export interface PeerLink {
  readonly raw: Buffer;
  /** Node's text of notBefore/notAfter ("Jan  1 00:00:00 2030 GMT"); "" when absent. */
  readonly validFrom: string;
  readonly validTo: string;
}

/** Certificates in a chain the count walks, at most: no handshake carries more. */
export const MAX_CHAIN_WALK = 64;

const NO_CHAIN: PeerChain = { leafDer: undefined, length: 0, leafAlone: true, links: [], topSelfIssued: false, issuer: undefined };

/** Node hands a socket's chain out as it was at the handshake; read once, for every use. */
export function peerChainOf(socket: TLSSocket): PeerChain {
  let top: unknown;
  try {
    top = socket.getPeerCertificate(true);
  } catch {
    return NO_CHAIN;
  }
  return peerChainFrom(top);
}

/**
 * The chain from what getPeerCertificate(true) returned: the connector has
 * it from Node's own name check (checkServerIdentity's `cert`), the same
 * object, and reading it again would cost a second copy of the chain.
 */
export function peerChainFrom(top: unknown): PeerChain {
  const raw = rawOf(top);
  if (raw === undefined) return NO_CHAIN;
  // Node links the sent certificates in issuing order, then issuers from the trust store,
  // and a self-issued last one to itself: that self-link is the root, which is not counted.
  const seen = new Set<unknown>([top]);
  const links: PeerLink[] = [linkOf(top, raw)];
  let next = issuerOf(top);
  const leafAlone = next === undefined || next === top;
  while (next !== undefined && !seen.has(next) && issuerOf(next) !== next && seen.size < MAX_CHAIN_WALK) {
    seen.add(next);
    pushLink(links, next);
    next = issuerOf(next);
  }
  // The self-linked root ends the walk uncounted; it is still a link people want to see.
  if (next !== undefined && !seen.has(next) && issuerOf(next) === next && links.length < MAX_CHAIN_WALK) pushLink(links, next);
  const last = links.length === 1 ? top : next;
  const topSelfIssued = last !== undefined && issuerOf(last) === last;
  const issuer = leafAlone ? undefined : rawOf(issuerOf(top));
  return { leafDer: raw, length: seen.size, leafAlone, links, topSelfIssued, issuer };
}

/** Node parses the DER it handed out (26-120 us, Node 24 to 20); a certificate it cannot parse is no leaf to describe. */
export function parsedLeaf(raw: Buffer): X509Certificate | undefined {
  try {
    return new X509Certificate(raw);
  } catch {
    return undefined;
  }
}

function pushLink(links: PeerLink[], certificate: unknown): void {
  const raw = rawOf(certificate);
  if (raw !== undefined) links.push(linkOf(certificate, raw));
}

function linkOf(certificate: unknown, raw: Buffer): PeerLink {
  return { raw, validFrom: textOf(certificate, "valid_from"), validTo: textOf(certificate, "valid_to") };
}

function textOf(certificate: unknown, field: "valid_from" | "valid_to"): string {
  if (typeof certificate !== "object" || certificate === null || !(field in certificate)) return "";
  const value: unknown = (certificate as Record<string, unknown>)[field];
  return typeof value === "string" ? value : "";
}

function rawOf(certificate: unknown): Buffer | undefined {
  if (typeof certificate !== "object" || certificate === null || !("raw" in certificate)) return undefined;
  return Buffer.isBuffer(certificate.raw) && certificate.raw.length > 0 ? certificate.raw : undefined;
}

function issuerOf(certificate: unknown): unknown {
  if (typeof certificate !== "object" || certificate === null || !("issuerCertificate" in certificate)) return undefined;
  return certificate.issuerCertificate ?? undefined;
}
