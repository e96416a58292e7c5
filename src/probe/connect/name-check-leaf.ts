import type { DetailedPeerCertificate, PeerCertificate, TLSSocket } from "node:tls";

/**
 * Node's own host-name check of a client handshake (tls.connect's 'secure'
 * handler, before 'secureConnect') reads the peer's certificate as
 * getPeerCertificate(true): a copy of every certificate the server sent,
 * each turned into an object (its public key decoded again on the way), and
 * the trust store searched for the top's issuer. tls.checkServerIdentity
 * then reads the leaf's `subject` and `subjectaltname`, nothing else (Node
 * 20, 22 and 24 alike), which getPeerCertificate(false), the leaf alone,
 * holds just the same: the same check, the same verdict and reason, for a
 * fraction of the work (about 8% of an HTTPS check's CPU; figures:
 * docs/benchmarks.md, issue 36).
 *
 * So the socket answers that first call with the leaf alone, and every
 * later one as Node does. `done` is called once the handshake is over:
 * Node skips its check when OpenSSL already refused the chain, and a reader
 * of the chain after that must have the whole of it. `leafDer` is the DER of
 * the leaf Node's check read (linked to nothing above it: keeping it holds no
 * chain), so a hop that needs only the leaf does not read it again.
 */
export interface NameCheckLeaf {
  readonly done: () => void;
  /** The DER of the leaf getPeerCertificate(false) gave Node's check; undefined when Node did not check (a refused chain). */
  readonly leafDer: () => Buffer | undefined;
}

export function leafForNameCheck(socket: TLSSocket): NameCheckLeaf {
  const nodeReads = socket.getPeerCertificate;
  let first = true;
  // The DER alone, not the object Node's check read: Node's socket wrappers
  // outlive the hop until a full collection (see done), and what the socket
  // still reaches when a scavenge finds it is copied and then promoted.
  let leafDer: Buffer | undefined;
  const read = function (this: TLSSocket, detailed?: boolean): PeerCertificate | DetailedPeerCertificate {
    if (!first) return nodeReads.call(this, detailed === true);
    first = false;
    const leaf = nodeReads.call(this, false);
    leafDer = leaf.raw;
    return leaf;
  };
  // An own property of this socket only: the prototype, and every other socket, are untouched.
  Object.defineProperty(socket, "getPeerCertificate", { value: read, writable: true, configurable: true, enumerable: false });
  return {
    done: () => {
      first = false;
      // Node's own reader again, so the socket holds nothing of this closure:
      // a destroyed socket's native wrappers keep it alive through every
      // scavenge until a mark-compact (figures: docs/benchmarks.md, issue 36).
      socket.getPeerCertificate = nodeReads;
    },
    leafDer: () => leafDer,
  };
}
