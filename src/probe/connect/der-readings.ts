import { createHash } from "node:crypto";

/**
 * Readings of bytes a server sent that this thread has already read, by what
 * they were read from (each part length-prefixed, so no two inputs share a
 * key): a staple with the leaf and its issuer (stapled-ocsp.ts), a leaf
 * certificate (tls-detail.ts), a chain's certificate (chain-certificate.ts).
 * A server sends the same certificates and staples the same answer to every
 * handshake for hours, and the same sites are checked again and again: a
 * repeat costs a SHA-256 of a few KiB instead of a parse. Bounded; the oldest
 * entry goes first, so a server sending fresh bytes each time costs the parse
 * it would anyway, and a hash.
 */
export class DerReadings<T> {
  private readonly readings = new Map<string, T>();

  constructor(private readonly capacity: number) {}

  read(parts: readonly (Uint8Array | undefined)[], compute: () => T): T {
    const hash = createHash("sha256");
    const length = Buffer.alloc(4);
    for (const part of parts) {
      length.writeUInt32BE(part === undefined ? 0xffffffff : part.length);
      hash.update(length);
      if (part !== undefined) hash.update(part);
    }
    const key = hash.digest("base64");
    const known = this.readings.get(key);
    if (known !== undefined) return known;
    const reading = compute();
    if (this.readings.size >= this.capacity) {
      const oldest = this.readings.keys().next();
      if (oldest.done !== true) this.readings.delete(oldest.value);
    }
    this.readings.set(key, reading);
    return reading;
  }

  get size(): number {
    return this.readings.size;
  }
}
