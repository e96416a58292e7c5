import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { CheckSiteRequestSchema, CheckSitesRequestSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { envelope } from "./grpc-frames.js";
import { parseHttp1, rawExchange } from "./raw-exchange.js";

/**
 * One call on any door of the port, as an attacker frames it: HTTP/1.1 on a
 * raw socket (so the framing is exactly what the test says: a Content-Length,
 * chunks, or no body at all) or h2c with Node's client (no content-length
 * header is HTTP/2's chunked: DATA frames until END_STREAM). What comes back
 * is reduced to what every door's answer has: a status and an error code.
 */
export type Door = "rest-get" | "rest-batch" | "connect-unary" | "connect-stream" | "grpc-unary" | "grpc-stream" | "grpc-web-unary" | "grpc-web-stream";
export type Framing = "content-length" | "chunked" | "none";
export type Protocol = "http1" | "h2c";

export const DOORS: readonly Door[] = ["rest-get", "rest-batch", "connect-unary", "connect-stream", "grpc-unary", "grpc-stream", "grpc-web-unary", "grpc-web-stream"];

const CHECK_SITE = "/sitediag.v1.DiagnosticsService/CheckSite";
const CHECK_SITES = "/sitediag.v1.DiagnosticsService/CheckSites";

export interface DoorCall {
  readonly door: Door;
  readonly framing: Framing;
  readonly protocol: Protocol;
  /** The x-api-key header; none when null. */
  readonly key: string | null;
  /** The url asked about; a body over the limit carries it padded past `padTo` bytes. */
  readonly url: string;
  readonly padTo?: number;
}

export interface DoorAnswer {
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The error code the door's own form carries (envelope, Connect JSON, grpc-status as its name); null when none. */
  readonly code: string | null;
  /** REST's envelope: meta.tool; null elsewhere. */
  readonly tool: string | null;
  /** The raw answer, for failure messages. */
  readonly text: string;
}

const GRPC_CODES: Readonly<Record<string, string>> = { "0": "ok", "8": "resource_exhausted", "14": "unavailable", "16": "unauthenticated", "3": "invalid_argument" };

interface Shaped {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** The request a door takes: path, content type and body (an empty body for framing "none"). */
function shape(call: DoorCall): Shaped {
  const url = call.padTo === undefined ? call.url : `${call.url}?${"p".repeat(call.padTo)}`;
  const key: Record<string, string> = call.key === null ? {} : { "x-api-key": call.key };
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const proto = (unary: boolean) => Buffer.from(unary ? toBinary(CheckSiteRequestSchema, create(CheckSiteRequestSchema, { url })) : toBinary(CheckSitesRequestSchema, create(CheckSitesRequestSchema, { urls: [url] })));
  const unary = call.door.endsWith("-unary");
  const path = unary ? CHECK_SITE : CHECK_SITES;
  const none = call.framing === "none";
  switch (call.door) {
    case "rest-get":
      return { method: "GET", path: `/api/v1/is-site-down?url=${encodeURIComponent(call.url)}`, headers: key, body: none ? Buffer.alloc(0) : json({ url }) };
    case "rest-batch":
      return { method: "POST", path: "/api/v1/batch/is-site-down", headers: { ...key, "content-type": "application/json" }, body: none ? Buffer.alloc(0) : json({ urls: [url] }) };
    case "connect-unary":
      return { method: "POST", path, headers: { ...key, "content-type": "application/json", "connect-protocol-version": "1" }, body: none ? Buffer.alloc(0) : json({ url }) };
    case "connect-stream":
      return { method: "POST", path, headers: { ...key, "content-type": "application/connect+json", "connect-protocol-version": "1" }, body: none ? Buffer.alloc(0) : envelope(json({ urls: [url] }), false) };
    case "grpc-unary":
    case "grpc-stream":
      return { method: "POST", path, headers: { ...key, "content-type": "application/grpc+proto", te: "trailers" }, body: none ? Buffer.alloc(0) : envelope(proto(unary), false) };
    case "grpc-web-unary":
    case "grpc-web-stream":
      return { method: "POST", path, headers: { ...key, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" }, body: none ? Buffer.alloc(0) : envelope(proto(unary), false) };
  }
}

/** Makes the call and reads its answer (within `waitMs`). */
export function callDoor(baseUrl: string, call: DoorCall, waitMs = 5_000): Promise<DoorAnswer> {
  return call.protocol === "http1" ? overHttp1(baseUrl, call, waitMs) : overH2c(baseUrl, call, waitMs);
}

async function overHttp1(baseUrl: string, call: DoorCall, waitMs: number): Promise<DoorAnswer> {
  const { method, path, headers, body } = shape(call);
  // Closed after the answer, so reading until the close reads exactly one answer.
  const lines = [`${method} ${path} HTTP/1.1`, "host: 127.0.0.1", "connection: close", ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  let payload = body;
  if (call.framing === "content-length") lines.push(`content-length: ${body.length}`);
  if (call.framing === "chunked") {
    lines.push("transfer-encoding: chunked");
    // Two chunks, so the server's reader sees the limit passed in the middle of the body, as a trickled one would.
    const half = Math.ceil(body.length / 2);
    payload = Buffer.concat([chunk(body.subarray(0, half)), chunk(body.subarray(half)), Buffer.from("0\r\n\r\n")]);
  }
  const reply = await rawExchange(Number(new URL(baseUrl).port), Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), payload]), waitMs);
  const parsed = parseHttp1(reply.bytes);
  if (parsed === undefined) return { status: 0, code: null, tool: null, text: reply.bytes.toString("latin1") };
  const grpcStatus = /^grpc-status: ?(\d+)/im.exec(parsed.headers)?.[1] ?? /grpc-status: ?(\d+)/.exec(parsed.body)?.[1];
  return answerOf(call.door, parsed.status, grpcStatus, parsed.body);
}

function overH2c(baseUrl: string, call: DoorCall, waitMs: number): Promise<DoorAnswer> {
  const { method, path, headers, body } = shape(call);
  return new Promise((resolve) => {
    const session = http2.connect(baseUrl);
    let status = 0;
    let grpcStatus: string | undefined;
    let text = "";
    const done = () => {
      clearTimeout(timer);
      session.destroy();
      resolve(answerOf(call.door, status, grpcStatus, text));
    };
    const timer = setTimeout(done, waitMs);
    session.on("error", () => undefined);
    const fields: http2.OutgoingHttpHeaders = { ":method": method, ":path": path, ...headers };
    if (call.framing === "content-length") fields["content-length"] = String(body.length);
    const stream = session.request(fields, { endStream: call.framing === "none" });
    const take = (got: http2.IncomingHttpHeaders) => {
      if (typeof got[":status"] === "number") status = got[":status"];
      if (typeof got["grpc-status"] === "string") grpcStatus = got["grpc-status"];
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", (data: Buffer) => (text += data.toString("latin1")));
    stream.on("error", () => undefined);
    // The answer is complete at its END_STREAM; the server may still be draining or resetting our half.
    stream.on("end", done);
    stream.on("close", done);
    if (call.framing !== "none") {
      // In pieces: without a content-length, the body's size is known only as it arrives.
      const half = Math.ceil(body.length / 2);
      stream.write(body.subarray(0, half));
      stream.end(body.subarray(half));
    }
  });
}

function chunk(bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);
}

function answerOf(door: Door, status: number, grpcStatus: string | undefined, text: string): DoorAnswer {
  const framed = /grpc-status: ?(\d+)/.exec(text)?.[1];
  const grpc = grpcStatus ?? framed;
  if (door.startsWith("grpc")) return { status, code: grpc === undefined ? null : (GRPC_CODES[grpc] ?? grpc), tool: null, text };
  const code = /"code":"(\w+)"/.exec(text)?.[1] ?? null;
  const tool = /"tool":"([\w-]+)"/.exec(text)?.[1] ?? null;
  return { status, code, tool, text };
}
