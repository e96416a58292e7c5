/**
 * The bench's target web site, run as its own process so that answering the
 * probes never competes with the service for one event loop. Listens on
 * 127.0.0.1 only and prints one JSON line with its ports, then serves until
 * killed:
 *
 *   http port    GET/HEAD /ok            200, two-byte body
 *                GET/HEAD /r/N           301 to /r/N+1; /r/CHAIN_LENGTH redirects to /ok
 *                GET/HEAD /delay/MS      200 after MS milliseconds (a query such as ?n=ID is allowed)
 *                GET      /lateness       the target's own lateness on every /delay answer since the last
 *                                         call (ms: answer written - request read - MS), as a JSON array; clears it
 *                GET      /held           for every /delay?n=ID answered since the last call, how long the target
 *                                         held that connection: answer written - connection accepted (ms), as a
 *                                         JSON object by ID; clears it
 *                GET      /stream        200 and a body that never ends (as fast as the client reads)
 *   silent port  accepts, reads the request, never answers
 *   https ports  with BENCH_TARGET_TLS (JSON: {"ecdsa": {"keyFile", "certFile"}, "rsa": ...}), the http
 *                port's answers over TLS, one port per leaf (TargetPorts.https)
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import { readFileSync } from "node:fs";

export interface TargetPorts {
  readonly http: number;
  readonly silent: number;
  /** Per leaf kind, when the target was given BENCH_TARGET_TLS. */
  readonly https?: Readonly<Record<string, number>>;
}

/** Redirects before /ok: /r/1 -> /r/2 -> /r/3 -> /r/4 -> /ok is five requests, a five-hop trace. */
const CHAIN_LENGTH = 4;

const STREAM_CHUNK = Buffer.alloc(64 * 1024, 0x61);

function handle(request: IncomingMessage, response: ServerResponse): void {
  const [path = "/", query = ""] = (request.url ?? "/").split("?", 2);
  if (path === "/ok") return void response.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("ok");
  const redirect = /^\/r\/(\d+)$/.exec(path);
  if (redirect !== null) {
    const step = Number(redirect[1]);
    const location = step >= CHAIN_LENGTH ? "/ok" : `/r/${step + 1}`;
    return void response.writeHead(301, { location, "content-length": "0" }).end();
  }
  const delay = /^\/delay\/(\d+)$/.exec(path);
  if (delay !== null) return delayed(request, response, Number(delay[1]), new URLSearchParams(query).get("n"));
  if (path === "/lateness") return json(response, lateness.splice(0));
  if (path === "/held") {
    const answer = Object.fromEntries(held);
    held.clear();
    return json(response, answer);
  }
  if (path === "/stream") return stream(response);
  response.writeHead(404, { "content-length": "0" }).end();
}

/**
 * How late the target itself answered each delayed request: a tool can only
 * report what the target did, so the bench shows this beside each tool's
 * timing error (the part of it no tool could avoid). Read from the request's
 * arrival at this loop, so the kernel's queue before it is not in it.
 */
const lateness: number[] = [];
/** Bounded: a run that never asks for them does not grow the target. */
const MAX_LATENESS_SAMPLES = 100_000;

/**
 * How long the target held each tagged request's connection, from the moment
 * this loop accepted it to the answer written: the site's own time as this
 * process saw it, its timer's lateness and its loop's queue included. A tool
 * that timed the request perfectly would report at least this (plus the
 * handshake before the accept), so what it reports beyond it is the tool's own.
 * The accept can come late when this loop is busy, which shortens the figure:
 * the tool is blamed for that, never credited.
 */
const held = new Map<string, number>();
const acceptedAt = new WeakMap<Socket, number>();

function delayed(request: IncomingMessage, response: ServerResponse, ms: number, id: string | null): void {
  const readAt = performance.now();
  // A second request on a kept connection counts from its own arrival.
  const since = acceptedAt.get(request.socket) ?? readAt;
  acceptedAt.delete(request.socket);
  const timer = setTimeout(() => {
    response.writeHead(200, { "content-length": "2" }).end("ok");
    const writtenAt = performance.now();
    if (lateness.length < MAX_LATENESS_SAMPLES) lateness.push(writtenAt - readAt - ms);
    if (id !== null && held.size < MAX_LATENESS_SAMPLES) held.set(id, writtenAt - since);
  }, ms);
  response.once("close", () => clearTimeout(timer));
}

function json(response: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
}

/** Writes only as fast as the client drains, so the target's own memory stays flat. */
function stream(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "application/octet-stream" });
  const pump = () => {
    while (!response.destroyed && response.write(STREAM_CHUNK));
  };
  response.on("drain", pump);
  pump();
}

function listen(server: Server, backlog: number): Promise<number> {
  return new Promise((resolve) =>
    server.listen({ host: "127.0.0.1", port: 0, backlog }, () => resolve((server.address() as AddressInfo).port)),
  );
}

const http = createHttpServer({ keepAliveTimeout: 60_000 }, handle);
http.on("connection", (socket: Socket) => acceptedAt.set(socket, performance.now()));
http.on("clientError", (_error, socket) => socket.destroy());
const silent = createTcpServer((socket) => {
  socket.on("error", () => socket.destroy());
  socket.resume();
});

const https: Record<string, number> = {};
const leaves = JSON.parse(process.env.BENCH_TARGET_TLS ?? "{}") as Record<string, { keyFile: string; certFile: string }>;
for (const [kind, files] of Object.entries(leaves)) {
  const server = createHttpsServer(
    { key: readFileSync(files.keyFile), cert: readFileSync(files.certFile), keepAliveTimeout: 60_000 },
    handle,
  );
  server.on("tlsClientError", () => undefined);
  https[kind] = await listen(server, 4_096);
}
const ports: TargetPorts = { http: await listen(http, 4_096), silent: await listen(silent, 4_096), https };
process.stdout.write(`${JSON.stringify(ports)}\n`);
