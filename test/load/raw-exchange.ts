import { connect } from "node:net";

/** What came back on a raw connection: the bytes, and whether the server closed it. */
export interface RawReply {
  readonly bytes: Buffer;
  readonly closedByServer: boolean;
}

/** Writes `data` to host:port, then reads until the server closes or `waitMs` passes (then gives up and closes). */
export function rawExchange(port: number, data: Buffer | string, waitMs = 3_000): Promise<RawReply> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port });
    let closedByServer = false;
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on("connect", () => socket.write(data));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => (closedByServer = true));
    socket.on("error", () => (closedByServer = true));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ bytes: Buffer.concat(chunks), closedByServer });
    });
  });
}

/** An HTTP/1.1 reply split into status, headers and body (a chunked body decoded). */
export function parseHttp1(bytes: Buffer): { status: number; headers: string; body: string } | undefined {
  const text = bytes.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
  if (end < 0 || status === undefined) return undefined;
  const headers = text.slice(0, end);
  const raw = text.slice(end + 4);
  const body = /^transfer-encoding:\s*chunked\s*$/im.test(headers) ? dechunk(raw) : raw;
  return { status: Number(status), headers, body: Buffer.from(body, "latin1").toString("utf8") };
}

function dechunk(raw: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at);
    if (lineEnd < 0) return out;
    const size = parseInt(raw.slice(at, lineEnd), 16);
    if (!Number.isFinite(size) || size === 0) return out;
    out += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** The HTTP/2 frame types in a server's reply, in order (the reply must start at a frame boundary). */
export function http2FrameTypes(bytes: Buffer): number[] {
  const types: number[] = [];
  for (let at = 0; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3)) types.push(bytes.readUInt8(at + 3));
  return types;
}

export const HTTP2_GOAWAY = 7;
