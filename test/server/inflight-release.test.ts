import http2 from "node:http2";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueKey } from "../../src/access/issue-key.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";
import { sampleValue } from "../fixtures/prometheus-text.js";

/**
 * A slot taken for a call goes back however the call ends, on every door:
 * here the client leaves while its key is still being looked up (a store
 * slow to answer, as a remote one can be), so its response has closed
 * before the door could bind the slot to it.
 */
const LOOKUP_MS = 1_000;
let service: ServeTestService;

beforeAll(async () => {
  service = await startTestService({
    as: "serve",
    config: { maxInflight: 1 },
    wrapStore: (store) => ({
      ...store,
      findKeyByDigest: async (digest) => {
        await new Promise((resolve) => setTimeout(resolve, LOOKUP_MS));
        return store.findKeyByDigest(digest);
      },
    }),
  });
});

afterAll(async () => {
  await service?.close();
});

async function inflight(): Promise<number | undefined> {
  return sampleValue(await (await fetch(`${service.url}/metrics`)).text(), "sitediag_inflight_checks");
}

/** A key the gate has not seen, so admitting it waits for the slow lookup. */
async function freshKey(name: string): Promise<string> {
  const issued = await issueKey(service.store, name);
  if (issued === undefined) throw new Error("no key issued");
  return issued.secret;
}

/** Resolves once the server holds the call's slot: its key is being looked up from then on. */
async function slotTaken(): Promise<void> {
  const started = performance.now();
  while ((await inflight()) !== 1) {
    if (performance.now() - started > 5_000) throw new Error("the call never took its slot");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Sends a request on HTTP/1.1 and hangs up while its key is looked up. */
async function leaveEarlyHttp1(head: string): Promise<void> {
  const socket = connect({ host: "127.0.0.1", port: Number(new URL(service.url).port) });
  socket.on("error", () => undefined);
  socket.write(head);
  await slotTaken();
  socket.destroy();
}

async function leaveEarlyH2c(headers: http2.OutgoingHttpHeaders, body: Buffer): Promise<void> {
  const session = http2.connect(service.url);
  session.on("error", () => undefined);
  const stream = session.request(headers);
  stream.on("error", () => undefined);
  stream.end(body);
  await slotTaken();
  session.destroy();
}

const CHECK_SITE = "/sitediag.v1.DiagnosticsService/CheckSite";
const body = Buffer.from(JSON.stringify({ url: "http://127.0.0.1:1/" }));

describe("a client gone during its key lookup holds no slot", () => {
  const doors: [string, (key: string) => Promise<void>][] = [
    [
      "REST over HTTP/1.1",
      (key) =>
        leaveEarlyHttp1(`GET /api/v1/is-site-down?url=http%3A%2F%2F127.0.0.1%3A1%2F HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\n\r\n`),
    ],
    [
      "Connect over HTTP/1.1",
      (key) =>
        leaveEarlyHttp1(
          `POST ${CHECK_SITE} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ncontent-length: ${body.length}\r\n\r\n${body.toString()}`,
        ),
    ],
    [
      "Connect over h2c",
      (key) => leaveEarlyH2c({ ":method": "POST", ":path": CHECK_SITE, "content-type": "application/json", "x-api-key": key }, body),
    ],
  ];

  it.each(doors)("%s", async (name, leave) => {
    await leave(await freshKey(name));
    // The lookup ends at most LOOKUP_MS after the client left; its slot must be free right after.
    const started = performance.now();
    let held: number | undefined;
    while (performance.now() - started < LOOKUP_MS + 2_000 && (held = await inflight()) !== 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held).toBe(0);
    const next = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent("not a url")}`, {
      headers: { "x-api-key": service.key },
    });
    expect(next.status).toBe(400);
  });
});
