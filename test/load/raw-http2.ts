import { connect, type Socket } from "node:net";
import { FLAG, frame, frameReader, FRAME_TYPE, hpackString, literalField, PREFACE } from "../fixtures/h2-frames.js";

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

const { headers: HEADERS, data: DATA, rstStream: RST_STREAM, settings: SETTINGS, goaway: GOAWAY } = FRAME_TYPE;
const { endStream: END_STREAM, endHeaders: END_HEADERS, ack: ACK } = FLAG;

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
  let nextStream = 1;

  socket.on("error", () => (closed = true));
  socket.on("close", () => (closed = true));
  socket.on(
    "data",
    frameReader(({ type, flags, stream, payload }) => {
      if (type === SETTINGS && (flags & ACK) === 0) {
        for (let at = 0; at + 6 <= payload.length; at += 6) if (payload.readUInt16BE(at) === 0x3) announcedMax = payload.readUInt32BE(at + 2);
        socket.write(frame(SETTINGS, ACK, 0));
      }
      if (type === RST_STREAM) resets.set(stream, payload.readUInt32BE(0));
      if (type === HEADERS) answered.add(stream);
      if (type === GOAWAY) closed = true;
    }),
  );
  socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)]));

  return {
    open(path, headers) {
      const stream = nextStream;
      nextStream += 2;
      const block = Buffer.concat([
        Buffer.from([0x83, 0x86]), // :method POST, :scheme http (static table)
        literal(4, path), // :path
        literal(1, `${host}:${port}`), // :authority
        ...Object.entries(headers).map(([name, value]) => literalField(name, value)),
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

/** HPACK literal without indexing, name from the static table (index below 15). */
function literal(nameIndex: number, value: string): Buffer {
  return Buffer.concat([Buffer.from([nameIndex]), hpackString(value)]);
}
