import { gzipSync } from "node:zlib";

/** A gRPC / gRPC-Web length-prefixed message: flag byte (1 = compressed), big-endian length, bytes. */
export function envelope(payload: Uint8Array, compressed: boolean): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(compressed ? 1 : 0, 0);
  head.writeUInt32BE(payload.byteLength, 1);
  return Buffer.concat([head, payload]);
}

/** gzip of `inflatedBytes` zero bytes: about a thousandth of its size on the wire, the shape of a decompression bomb. */
export function gzipBomb(inflatedBytes: number): Buffer {
  return gzipSync(Buffer.alloc(inflatedBytes, 0), { level: 9 });
}

/** `bytes` of 2-byte protobuf fields the request message does not have (field 15, varint 0): all parsed, all kept as unknown. */
export function unknownFields(bytes: number): Buffer {
  const out = Buffer.alloc(bytes - (bytes % 2));
  for (let at = 0; at < out.length; at += 2) {
    out[at] = (15 << 3) | 0; // field 15, wire type varint: not a field of CheckSiteRequest
    out[at + 1] = 0;
  }
  return out;
}
