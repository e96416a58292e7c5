import http2 from "node:http2";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";
import { sampleValue } from "../fixtures/prometheus-text.js";

/**
 * A client that hangs up halfway through its body, on HTTP/1.1 (either
 * framing) or by resetting its HTTP/2 stream: the call ends there, its
 * slots go back, and the log does not call it a server defect (an alert
 * would fire for every impatient client).
 */
let service: ServeTestService;

beforeAll(async () => {
  service = await startTestService({ as: "serve" });
});

afterAll(async () => {
  await service?.close();
});

const DOORS = [
  ["REST batch", "/api/v1/batch/is-site-down", "application/json"],
  ["Connect streaming", "/sitediag.v1.DiagnosticsService/CheckSites", "application/connect+json"],
  ["Connect unary", "/sitediag.v1.DiagnosticsService/CheckSite", "application/json"],
] as const;
const HALF = '{"urls": ["http://127.0.0.1:1/", "http:/';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function leaveHttp1(path: string, contentType: string, framing: "chunked" | "content-length"): Promise<void> {
  const socket = connect({ host: "127.0.0.1", port: Number(new URL(service.url).port) });
  socket.on("error", () => undefined);
  const length = framing === "chunked" ? "transfer-encoding: chunked" : "content-length: 500";
  const body = framing === "chunked" ? `${HALF.length.toString(16)}\r\n${HALF}\r\n` : HALF;
  socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: ${contentType}\r\nx-api-key: ${service.key}\r\n${length}\r\n\r\n${body}`);
  await pause(100);
  socket.destroy();
}

async function leaveH2c(path: string, contentType: string): Promise<void> {
  const session = http2.connect(service.url);
  session.on("error", () => undefined);
  const stream = session.request({ ":method": "POST", ":path": path, "content-type": contentType, "x-api-key": service.key });
  stream.on("error", () => undefined);
  stream.write(HALF);
  await pause(100);
  stream.close(http2.constants.NGHTTP2_CANCEL);
  await pause(50);
  session.destroy();
}

describe("a client gone halfway through its body", () => {
  it.each(DOORS)("%s: no defect logged, no slot held, the next call served", async (_name, path, contentType) => {
    const logged = service.logLines().length;
    await leaveHttp1(path, contentType, "chunked");
    await leaveHttp1(path, contentType, "content-length");
    await leaveH2c(path, contentType);
    let inflight: number | undefined;
    for (let tries = 0; tries < 100 && inflight !== 0; tries++) {
      inflight = sampleValue(await (await fetch(`${service.url}/metrics`)).text(), "sitediag_inflight_checks");
      if (inflight !== 0) await pause(20);
    }
    expect(inflight).toBe(0);
    expect(
      service
        .logLines()
        .slice(logged)
        .filter((line) => line.msg === "server defect"),
    ).toEqual([]);
    const next = await fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent("not a url")}`, {
      headers: { "x-api-key": service.key },
    });
    expect(next.status).toBe(400);
  });
});
