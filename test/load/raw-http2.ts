import { connect, type Socket } from "node:net";

/**
 * An HTTP/2 client that speaks the frames itself, as an attacker would: it
 * opens streams without waiting for the server's limits, never ends their
 * bodies unless told to, and records what the server sends back per frame type.
 */
export interface RawHttp2 {
  /** Opens a stream with these headers (END_HEADERS, not END_STREAM); returns its id. */
  open(path: string, headers: Readonly<Record<string, string>>): number;
  /** Sends a DATA frame on a stream, ending it when `end`. */
  data(stream: number, payload: Buffer, end: boolean): void;
  /** Error code of every RST_STREAM received, by stream id. */
  readonly resets: ReadonlyMap<number, number>;
  /** Streams the server answered with HEADERS. */
  readonly answered: ReadonlySet<number>;
  /** True once the server sent GOAWAY or closed the connection. */
  closed(): boolean;
  /** SETTINGS_MAX_CONCURRENT_STREAMS the server announced, if it did. */
  maxConcurrentStreams(): number | undefined;
  destroy(): void;
}

export const RST_REFUSED_STREAM = 7;
export const RST_CANCEL = 8;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const HEADERS = 1;
const DATA = 0;
const RST_STREAM = 3;
const SETTINGS = 4;
const GOAWAY = 7;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

export async function connectRawHttp2(port: number, host = "127.0.0.1"): Promise<RawHttp2> {
  const socket: Socket = connect({ host, port });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const resets = new Map<number, number>();
  const answered = new Set<number>();
  let closed = false;
  let announcedMax: number | undefined;
  let pending = Buffer.alloc(0);
  let nextStream = 1;

  socket.on("error", () => (closed = true));
  socket.on("close", () => (closed = true));
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const type = pending.readUInt8(3);
      const flags = pending.readUInt8(4);
      const stream = pending.readUInt32BE(5) & 0x7fffffff;
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      if (type === SETTINGS && (flags & ACK) === 0) {
        for (let at = 0; at + 6 <= payload.length; at += 6) if (payload.readUInt16BE(at) === 0x3) announcedMax = payload.readUInt32BE(at + 2);
        socket.write(frame(SETTINGS, ACK, 0));
      }
      if (type === RST_STREAM) resets.set(stream, payload.readUInt32BE(0));
      if (type === HEADERS) answered.add(stream);
      if (type === GOAWAY) closed = true;
    }
  });
  socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)]));

  return {
    open(path, headers) {
      const stream = nextStream;
      nextStream += 2;
      const block = Buffer.concat([
        Buffer.from([0x83, 0x86]), // :method POST, :scheme http (static table)
        literal(4, path), // :path
        literal(1, `${host}:${port}`), // :authority
        ...Object.entries(headers).map(([name, value]) => literalNewName(name, value)),
      ]);
      socket.write(frame(HEADERS, END_HEADERS, stream, block));
      return stream;
    },
    data(stream, payload, end) {
      if (!socket.destroyed) socket.write(frame(DATA, end ? END_STREAM : 0, stream, payload));
    },
    resets,
    answered,
    closed: () => closed,
    maxConcurrentStreams: () => announcedMax,
    destroy: () => socket.destroy(),
  };
}

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK literal without indexing, name from the static table (index below 15). */
function literal(nameIndex: number, value: string): Buffer {
  return Buffer.concat([Buffer.from([nameIndex]), hpackString(value)]);
}

/** HPACK literal without indexing, new name. */
function literalNewName(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]);
}

/** An HPACK string without Huffman coding; lengths up to 126 bytes, which is all these tests send. */
function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, "latin1");
  if (bytes.length > 126) throw new Error("hpackString: value too long for a one-byte length");
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}
