import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config.js";
import type { HopOutcome, HopRequest, HopResponse, Prober } from "../../../src/probe/hop-types.js";
import { bodyDrain, type BodyDrain } from "../../../src/probe/http/body-drain.js";
import { createConnectionKeeper, KEPT_IDLE_MS } from "../../../src/probe/http/kept-connections.js";
import { type DnsServer, startDnsServer } from "../../fixtures/dns-server.js";
import { checkedResult, createTestEnv, loopbackProber, traceResult, type TestEnv, traceRedirects } from "../../fixtures/test-env.js";
import { until } from "../../fixtures/until.js";

/**
 * A same-origin redirect's next request goes over the connection already
 * made, as browsers and curl do it, only when the server said keep-alive and
 * framed the body; anything less dials as before. A raw loopback server
 * writes every answer byte for byte and counts connections.
 */
interface Seen {
  readonly connection: number;
  readonly path: string;
  /** Requests before this one on the same connection. */
  readonly before: number;
  /** The request's Connection header. */
  readonly connectionHeader: string | undefined;
}

type Answer = string | { readonly head: string; readonly later: string } | "hang-up";

const KEEP = "connection: keep-alive\r\n";
const ok = `HTTP/1.1 200 OK\r\ncontent-length: 2\r\n${KEEP}\r\nok`;
/** A 200 with an empty body: the same bytes are right for HEAD and GET (this server does not look at the method). */
const emptyPage = `HTTP/1.1 200 OK\r\ncontent-length: 0\r\n${KEEP}\r\n`;
const moved = (to: string, extra = "") => `HTTP/1.1 301 Moved Permanently\r\nlocation: ${to}\r\n${extra}`;

let server: Server;
let port = 0;
let otherServer: Server;
let otherPort = 0;
let seen: Seen[] = [];
let connections = 0;
let answers: Readonly<Record<string, Answer | ((before: number) => Answer)>> = {};

/** Connections the client has closed (their numbers). */
const closed = new Set<number>();

function serve(socket: Socket): void {
  const connection = ++connections;
  let buffered = "";
  let count = 0;
  socket.on("error", () => undefined);
  socket.on("close", () => closed.add(connection));
  socket.on("data", (chunk) => {
    buffered += chunk.toString("latin1");
    for (let end = buffered.indexOf("\r\n\r\n"); end !== -1; end = buffered.indexOf("\r\n\r\n")) {
      const head = buffered.slice(0, end);
      buffered = buffered.slice(end + 4);
      const path = head.split(" ")[1] ?? "/";
      const before = count++;
      const connectionHeader = /^connection: *(.*)$/im.exec(head)?.[1];
      seen.push({ connection, path, before, connectionHeader });
      const rule = answers[path] ?? "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
      const answer = typeof rule === "function" ? rule(before) : rule;
      if (answer === "hang-up") socket.destroy();
      else if (typeof answer === "string") socket.write(answer);
      else {
        socket.write(answer.head);
        setTimeout(() => socket.write(answer.later), 20);
      }
    }
  });
}

function listen(target: Server): Promise<number> {
  return new Promise((resolve) => target.listen(0, "127.0.0.1", () => resolve((target.address() as AddressInfo).port)));
}

beforeAll(async () => {
  server = createServer(serve);
  otherServer = createServer(serve);
  port = await listen(server);
  otherPort = await listen(otherServer);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => otherServer.close(resolve));
});

afterEach(() => {
  seen = [];
  answers = {};
});

const url = (path: string, at = port) => new URL(`http://127.0.0.1:${at}${path}`);
const request = (path: string, extra: Partial<HopRequest> = {}): HopRequest => ({
  url: url(path),
  method: "GET",
  timeoutMs: 2_000,
  ports: { kind: "fetch-safe" },
  ...extra,
});

function answered(outcome: HopOutcome): HopResponse {
  if (outcome.kind !== "response") throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
  return outcome.response;
}

/** Each request's connection, renumbered from 1 in order of first use. */
function connectionsOf(requests: readonly Seen[]): number[] {
  const order = new Map<number, number>();
  return requests.map((request) => {
    if (!order.has(request.connection)) order.set(request.connection, order.size + 1);
    return order.get(request.connection) as number;
  });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a same-origin redirect's connection carries the next request", () => {
  let prober: Prober;
  beforeAll(() => {
    prober = loopbackProber();
  });
  afterAll(() => prober.close());

  it("over one connection: the second request has no connect phase and says so", async () => {
    answers = { "/from": moved("/to", `content-length: 5\r\n${KEEP}\r\nmoved`), "/to": ok };
    const first = answered(await prober.hop(request("/from")));
    expect(first).toMatchObject({ status: 301, connectionReused: false });
    expect(first.keptConnection).not.toBeNull();
    expect(first.timings.connectMs).toEqual(expect.any(Number));
    const second = answered(await prober.hop(request("/to", { reuse: first.keptConnection ?? undefined })));
    expect(second).toMatchObject({ status: 200, connectionReused: true, keptConnection: null, remoteAddress: "127.0.0.1" });
    expect(second.timings).toMatchObject({ connectMs: null, tlsMs: null, dnsMs: null, firstByteMs: expect.any(Number) });
    expect(seen.map((request) => request.path)).toEqual(["/from", "/to"]);
    expect(connectionsOf(seen)).toEqual([1, 1]);
    expect(seen.map((request) => request.connectionHeader)).toEqual(["keep-alive", "keep-alive"]);
  });

  it.each([
    ["an empty chunked body (Node's own for writeHead and end)", `transfer-encoding: chunked\r\n${KEEP}\r\n0\r\n\r\n`],
    ["a chunked body with a chunk and a trailer", `transfer-encoding: chunked\r\n${KEEP}\r\n5\r\nmoved\r\n0\r\nx-trailer: 1\r\n\r\n`],
    ["a chunked body with bare LF line ends", `transfer-encoding: chunked\r\n${KEEP}\r\n5\nmoved\n0\n\n`],
  ])("%s is read through, and the connection carries the next request", async (_case, rest) => {
    answers = { "/from": moved("/to", rest), "/to": ok };
    const first = answered(await prober.hop(request("/from")));
    const second = answered(await prober.hop(request("/to", { reuse: first.keptConnection ?? undefined })));
    expect(second.connectionReused).toBe(true);
    expect(connectionsOf(seen)).toEqual([1, 1]);
  });

  it("a body that comes after the head is read to its end before the connection is used again", async () => {
    answers = { "/slow-body": { head: moved("/to", `content-length: 10\r\n${KEEP}\r\nhalf`), later: "-body" + "!" }, "/to": ok };
    const first = answered(await prober.hop(request("/slow-body")));
    await delay(100);
    const second = answered(await prober.hop(request("/to", { reuse: first.keptConnection ?? undefined })));
    expect(second.connectionReused).toBe(true);
    expect(connectionsOf(seen)).toEqual([1, 1]);
  });

  it("a connection whose body is still arriving is not used: the next request dials", async () => {
    answers = { "/slow-body": { head: moved("/to", `content-length: 10\r\n${KEEP}\r\nhalf`), later: "-body!" }, "/to": ok };
    const first = answered(await prober.hop(request("/slow-body")));
    const second = answered(await prober.hop(request("/to", { reuse: first.keptConnection ?? undefined })));
    expect(second).toMatchObject({ status: 200, connectionReused: false });
    expect(connectionsOf(seen)).toEqual([1, 2]);
  });

  const timedOut = "HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

  it.each([
    ["a kept connection the server hangs up on unanswered", "hang-up" as const],
    ["a 408 on a kept connection (the server timing the connection out, as Chromium reads it)", timedOut],
  ])("%s is asked again on a new one, as browsers do", async (_case, onKept) => {
    answers = { "/from": moved("/to", `content-length: 0\r\n${KEEP}\r\n`), "/to": (before) => (before > 0 ? onKept : ok) };
    const first = answered(await prober.hop(request("/from")));
    const second = answered(await prober.hop(request("/to", { reuse: first.keptConnection ?? undefined })));
    expect(second).toMatchObject({ status: 200, connectionReused: false });
    expect(second.timings.connectMs).toEqual(expect.any(Number));
    expect(seen.map((request) => [request.path, request.before])).toEqual([
      ["/from", 0],
      ["/to", 1],
      ["/to", 0],
    ]);
  });

  it("a 408 is the site's answer on a new connection, and once asked again: never a loop", async () => {
    answers = { "/from": moved("/to", `content-length: 0\r\n${KEEP}\r\n`), "/to": timedOut };
    expect(answered(await prober.hop(request("/to")))).toMatchObject({ status: 408, connectionReused: false });
    const first = answered(await prober.hop(request("/from")));
    expect(answered(await prober.hop(request("/to", { reuse: first.keptConnection ?? undefined })))).toMatchObject({
      status: 408,
      connectionReused: false,
    });
    expect(seen.map((request) => [request.path, request.before])).toEqual([
      ["/to", 0],
      ["/from", 0],
      ["/to", 1],
      ["/to", 0],
    ]);
  });

  it.each([
    ["the server did not say keep-alive", moved("/to", "content-length: 0\r\n\r\n")],
    ["the server said close", moved("/to", "content-length: 0\r\nconnection: close\r\n\r\n")],
    ["HTTP/1.0", `HTTP/1.0 301 Moved Permanently\r\nlocation: /to\r\ncontent-length: 0\r\n${KEEP}\r\n`],
    ["a chunked body with bytes after its end", moved("/to", `transfer-encoding: chunked\r\n${KEEP}\r\n0\r\n\r\nextra`)],
    ["a body of no stated length", moved("/to", `${KEEP}\r\n`)],
    ["more bytes than the body announced", moved("/to", `content-length: 0\r\n${KEEP}\r\nextra`)],
    ["a body too long to read through", moved("/to", `content-length: ${64 * 1024 + 1}\r\n${KEEP}\r\n`)],
  ])("nothing is kept when %s", async (_case, answer) => {
    answers = { "/from": answer, "/to": ok };
    const first = answered(await prober.hop(request("/from")));
    expect(first.keptConnection).toBeNull();
    const second = answered(await prober.hop(request("/to")));
    expect(second.connectionReused).toBe(false);
    expect(connectionsOf(seen)).toEqual([1, 2]);
  });

  it("nothing is kept for a redirect to another origin, nor for an answer that is not a redirect", async () => {
    answers = { "/away": moved(`http://127.0.0.1:${otherPort}/to`, `content-length: 0\r\n${KEEP}\r\n`), "/to": ok };
    expect(answered(await prober.hop(request("/away"))).keptConnection).toBeNull();
    expect(answered(await prober.hop(request("/to"))).keptConnection).toBeNull();
  });

  it("a final answer's connection is kept only when the request asks (keepAfterAnswer), for the next request to it", async () => {
    answers = { "/page": ok };
    const first = answered(await prober.hop(request("/page", { keepAfterAnswer: true })));
    expect(first).toMatchObject({ status: 200, keptConnection: expect.objectContaining({ id: expect.any(Number) }) });
    const second = answered(await prober.hop(request("/page", { reuse: first.keptConnection ?? undefined })));
    expect(second).toMatchObject({ status: 200, connectionReused: true });
    expect(connectionsOf(seen)).toEqual([1, 1]);
  });

  it("a handle is used once, and only for its own origin", async () => {
    answers = { "/from": moved("/to", `content-length: 0\r\n${KEEP}\r\n`), "/to": ok };
    const first = answered(await prober.hop(request("/from")));
    const handle = first.keptConnection ?? undefined;
    const elsewhere = answered(await prober.hop({ ...request("/to"), url: url("/to", otherPort), reuse: handle }));
    expect(elsewhere.connectionReused).toBe(false);
    // The wrong origin's use closed it: the right origin dials too.
    const again = answered(await prober.hop(request("/to", { reuse: handle })));
    expect(again.connectionReused).toBe(false);
  });
});

describe("the next hop's own resolution", () => {
  let dns: DnsServer;
  let prober: Prober;
  beforeAll(async () => {
    dns = await startDnsServer();
    prober = loopbackProber({ dnsServers: [dns.server] });
  });
  afterAll(async () => {
    await prober.close();
    await dns.close();
  });

  it("decides: a kept connection whose address the name no longer resolves to is not used", async () => {
    // First asked: the server's address; every later answer: another loopback address, where nothing listens
    // (no fixture binds 127.0.0.9; 127.0.0.2 is where other files' servers take a port the kernel chose).
    dns.answer("moved.test", { a: ["127.0.0.1"] }, { a: ["127.0.0.9"] });
    answers = { "/from": moved("/to", `content-length: 0\r\n${KEEP}\r\n`), "/to": ok };
    const named = (path: string) => new URL(`http://moved.test:${port}${path}`);
    const first = answered(await prober.hop({ ...request("/from"), url: named("/from") }));
    expect(first.keptConnection).not.toBeNull();
    const second = await prober.hop({ ...request("/to"), url: named("/to"), reuse: first.keptConnection ?? undefined });
    // It dialled the new answer (refused there) instead of sending the request over the old connection.
    expect(second).toMatchObject({ kind: "failure", failure: { stage: "connect", remoteAddress: "127.0.0.9" } });
    expect(seen.map((request) => request.path)).toEqual(["/from"]);
  });
});

describe("checks pass the connection along", () => {
  let env: TestEnv;
  beforeAll(() => {
    env = createTestEnv();
  });
  afterAll(() => env.close());

  it("is-site-down through two same-origin redirects uses one connection", async () => {
    answers = {
      "/one": moved("/two", `content-length: 0\r\n${KEEP}\r\n`),
      "/two": moved("/three", `content-length: 0\r\n${KEEP}\r\n`),
      "/three": ok,
    };
    const result = await checkedResult(url("/one").href, env);
    expect(result).toMatchObject({ status: "up", statusCode: 200, redirectHops: [{ status: 301 }, { status: 301 }] });
    expect(connectionsOf(seen)).toEqual([1, 1, 1]);
  });
});

describe("redirect-check with details asks its final page again over the final hop's connection", () => {
  let env: TestEnv;
  beforeAll(() => {
    env = createTestEnv({ tracePorts: [port] });
  });
  afterAll(() => env.close());

  // A kept connection nobody asks for again is closed only after the keeper's idle time (2 s): one closed well
  // before that was let go by its hop.
  const closedSoon = (connection: number) => until(() => (closed.has(connection) ? true : undefined), KEPT_IDLE_MS / 2);

  it("with details: one connection for the chain and the page's GET, let go after it", async () => {
    answers = { "/one": moved("/page", `content-length: 0\r\n${KEEP}\r\n`), "/page": emptyPage };
    const detailed = await traceRedirects(url("/one").href, env, undefined, { details: true });
    expect(detailed).toMatchObject({ kind: "result", result: { finalStatus: 200 } });
    expect(seen.map((request) => request.path)).toEqual(["/one", "/page", "/page"]);
    expect(connectionsOf(seen)).toEqual([1, 1, 1]);
    await closedSoon(seen[0]?.connection ?? -1);
  });

  it("without details: nothing is kept for the final hop", async () => {
    answers = { "/one": moved("/page", `content-length: 0\r\n${KEEP}\r\n`), "/page": emptyPage };
    await traceResult(url("/one").href, env);
    expect(seen.map((request) => request.path)).toEqual(["/one", "/page"]);
    expect(connectionsOf(seen)).toEqual([1, 1]);
    await closedSoon(seen[0]?.connection ?? -1);
  });
});

describe("SITEDIAG_REUSE_CONNECTIONS=false", () => {
  it("dials every request, as blackbox_exporter does", async () => {
    const prober = loopbackProber({ reuseConnections: false });
    try {
      // Made inside the test, after the setup's wait: on probe threads a hop sent during its boot would wait for it.
      await prober.ready?.();
      answers = { "/from": moved("/to", `content-length: 0\r\n${KEEP}\r\n`), "/to": ok };
      const first = answered(await prober.hop(request("/from")));
      expect(first.keptConnection).toBeNull();
      answered(await prober.hop(request("/to")));
      expect(connectionsOf(seen)).toEqual([1, 2]);
      // Nothing will be reused, so the server is asked to close, as blackbox_exporter asks it.
      expect(seen.map((request) => request.connectionHeader)).toEqual(["close", "close"]);
    } finally {
      await prober.close();
    }
  });

  it("is read as true or false only; true by default", () => {
    expect(loadConfig({}).reuseConnections).toBe(true);
    expect(loadConfig({ SITEDIAG_REUSE_CONNECTIONS: "false" }).reuseConnections).toBe(false);
    expect(loadConfig({ SITEDIAG_REUSE_CONNECTIONS: "true" }).reuseConnections).toBe(true);
    expect(() => loadConfig({ SITEDIAG_REUSE_CONNECTIONS: "no" })).toThrow(ConfigError);
    expect(() => loadConfig({ SITEDIAG_REUSE_CONNECTIONS: "no" })).toThrow(/SITEDIAG_REUSE_CONNECTIONS/);
  });
});

describe("the keeper", () => {
  it("closes a connection nobody came back for after its idle time, and then has nothing to give", async () => {
    const keeper = createConnectionKeeper(16, 50);
    const { socket, closedByPeer } = await openTo(port);
    const handle = keeper.keep(
      { protocol: "http/1.1", socket, drain: emptyBody() },
      { origin: url("/").origin, remote: { address: "127.0.0.1", family: 4 }, tls: null },
    );
    expect(handle).not.toBeNull();
    await closedByPeer;
    expect(socket.destroyed).toBe(true);
    expect(keeper.take(handle ?? { id: 0 }, url("/").origin)).toBeNull();
  });

  it("keeps none beyond its limit, and closes every kept one when the prober closes", async () => {
    const keeper = createConnectionKeeper(1, 60_000);
    const first = await openTo(port);
    const second = await openTo(port);
    const origin = { origin: url("/").origin, remote: { address: "127.0.0.1", family: 4 as const }, tls: null };
    expect(keeper.keep({ protocol: "http/1.1", socket: first.socket, drain: emptyBody() }, origin)).not.toBeNull();
    expect(keeper.keep({ protocol: "http/1.1", socket: second.socket, drain: emptyBody() }, origin)).toBeNull();
    second.socket.destroy();
    keeper.close();
    await first.closedByPeer;
  });
});

function emptyBody(): BodyDrain {
  const drain = bodyDrain({ kind: "length", length: 0 });
  if (drain === null) throw new Error("an empty body always drains");
  return drain;
}

/** A client socket to the raw server, and a promise that settles when it closes. */
async function openTo(at: number): Promise<{ socket: Socket; closedByPeer: Promise<void> }> {
  const { connect } = await import("node:net");
  const socket = connect({ host: "127.0.0.1", port: at });
  socket.on("error", () => undefined);
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.pause();
  return { socket, closedByPeer: new Promise((resolve) => socket.once("close", () => resolve())) };
}
