import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_INTERIM_RESPONSES } from "../../../src/probe/http/exchange-types.js";
import type { HopOutcome, Prober } from "../../../src/probe/hop-types.js";
import { createProber } from "../../../src/probe/prober.js";
import { USER_AGENT } from "../../../src/package-info.js";
import { type RawTarget, startRawTarget } from "../../fixtures/raw-targets.js";
import { checkedResult, createTestEnv, loopbackProber, type TestEnv } from "../../fixtures/test-env.js";

/**
 * Heads browsers and curl accept, and the contradictions Chromium refuses,
 * each written byte for byte by a raw loopback server (issue 18).
 */
const ok = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
const ANSWERS: Readonly<Record<string, string>> = {
  "/continue": `HTTP/1.1 100 Continue\r\n\r\n${ok}`,
  "/early-hints": `HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n${ok}`,
  "/interim-then-redirect": "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\nlocation: /landed\r\ncontent-length: 0\r\n\r\n",
  "/landed": ok,
  "/interim-at-limit": `${"HTTP/1.1 100 Continue\r\n\r\n".repeat(MAX_INTERIM_RESPONSES)}${ok}`,
  "/interim-flood": `${"HTTP/1.1 100 Continue\r\n\r\n".repeat(MAX_INTERIM_RESPONSES + 1)}${ok}`,
  // Three interim heads of ~600 bytes each, then a small final head: over 1 KiB only all together.
  "/heavy-interim": `${`HTTP/1.1 103 Early Hints\r\nlink: <${"x".repeat(560)}>\r\n\r\n`.repeat(3)}${ok}`,
  "/switching": "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n",
  "/bare-lf": "HTTP/1.1 200 OK\ncontent-type: text/plain\ncontent-length: 2\n\nok",
  "/mixed-endings": "HTTP/1.1 301 Moved\r\nlocation: /landed\ncontent-length: 0\r\n\n",
  "/lone-cr": "HTTP/1.1 200 OK\rcontent-length: 2\r\n\r\nok",
  "/space-before-colon": "HTTP/1.1 200 OK\r\ncontent-length : 2\r\n\r\nok",
  "/two-locations": "HTTP/1.1 302 Found\r\nlocation: /landed\r\nlocation: /elsewhere\r\ncontent-length: 0\r\n\r\n",
  "/same-location-twice": "HTTP/1.1 302 Found\r\nlocation: /landed\r\nlocation: /landed\r\ncontent-length: 0\r\n\r\n",
  "/te-and-cl": "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n2\r\nok\r\n0\r\n\r\n",
  "/bad-length": "HTTP/1.1 200 OK\r\ncontent-length: two\r\n\r\nok",
  "/folded": "HTTP/1.1 302 Found\r\nlocation: /lan\r\nx-note: a\r\n  b\r\ncontent-length: 0\r\n\r\n",
};

let target: RawTarget;
let env: TestEnv;
let prober: Prober;

beforeAll(async () => {
  target = await startRawTarget({
    kind: "bytes",
    answer: (path) => Buffer.from(ANSWERS[path] ?? "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", "latin1"),
  });
  env = createTestEnv({ siteTimeoutMs: 2_000 });
  prober = loopbackProber();
});
afterAll(async () => {
  await target.close();
  await env.close();
  await prober.close();
});

const url = (path: string) => `http://127.0.0.1:${target.port}${path}`;
const hop = (path: string, method: "GET" | "HEAD" = "GET"): Promise<HopOutcome> =>
  prober.hop({ url: new URL(url(path)), method, timeoutMs: 2_000, ports: { kind: "fetch-safe" } });

async function response(path: string) {
  const outcome = await hop(path);
  if (outcome.kind !== "response") throw new Error(JSON.stringify(outcome));
  return outcome.response;
}

async function failure(path: string) {
  const outcome = await hop(path);
  if (outcome.kind !== "failure") throw new Error(JSON.stringify(outcome));
  return outcome.failure;
}

describe("interim (1xx) responses are skipped until the final one", () => {
  it("an unsolicited 100 Continue before a 200 is up (it was down: 'closed the connection without a response')", async () => {
    expect(await checkedResult(url("/continue"), env)).toMatchObject({ status: "up", statusCode: 200, failedStage: null });
  });

  it("a 103 Early Hints and a 100 before the final response: the final status is what counts", async () => {
    const answer = await response("/early-hints");
    expect(answer).toMatchObject({ status: 200, statusText: "OK", httpVersion: "1.1" });
    expect(answer.headers.link).toBeUndefined();
  });

  it("an interim response before a redirect: the redirect is followed", async () => {
    expect(await checkedResult(url("/interim-then-redirect"), env)).toMatchObject({
      status: "up",
      statusCode: 200,
      finalUrl: url("/landed"),
    });
  });

  it(`takes up to ${MAX_INTERIM_RESPONSES} interim responses, and refuses one more`, async () => {
    expect((await response("/interim-at-limit")).status).toBe(200);
    expect(await failure("/interim-flood")).toMatchObject({
      stage: "http",
      cause: "TOO_MANY_INTERIM_RESPONSES",
      reason: "The server sent too many interim (1xx) responses",
      timedOut: false,
    });
  });

  it("interim heads count against the head limit, with the final one", async () => {
    const small = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: USER_AGENT, maxResponseHeadBytes: 1_024 });
    try {
      const outcome = await small.hop({
        url: new URL(url("/heavy-interim")),
        method: "GET",
        timeoutMs: 2_000,
        ports: { kind: "fetch-safe" },
      });
      expect(outcome).toMatchObject({ kind: "failure", failure: { stage: "http", cause: "RESPONSE_HEAD_TOO_LARGE" } });
      expect(
        await small.hop({ url: new URL(url("/continue")), method: "GET", timeoutMs: 2_000, ports: { kind: "fetch-safe" } }),
      ).toMatchObject({ kind: "response" });
    } finally {
      await small.close();
    }
  });

  it("a 101 nobody asked for is an invalid response", async () => {
    expect(await failure("/switching")).toMatchObject({
      stage: "http",
      cause: "HTTP_PARSE_ERROR",
      reason: "The server sent an invalid HTTP response",
    });
  });
});

describe("line endings (RFC 9112 §2.2)", () => {
  it("a head with bare-LF line endings is up (it was down: 'invalid HTTP response')", async () => {
    expect(await checkedResult(url("/bare-lf"), env)).toMatchObject({ status: "up", statusCode: 200 });
    expect((await response("/bare-lf")).headers["content-type"]).toBe("text/plain");
  });

  it("CRLF and LF mixed in one head are read line by line", async () => {
    expect(await checkedResult(url("/mixed-endings"), env)).toMatchObject({ status: "up", statusCode: 200, finalUrl: url("/landed") });
  });

  it.each(["/lone-cr", "/space-before-colon"])("every other rule stays: %s is an invalid response", async (path) => {
    expect(await failure(path)).toMatchObject({
      stage: "http",
      cause: "HTTP_PARSE_ERROR",
      reason: "The server sent an invalid HTTP response",
    });
  });

  it("an obs-fold line continues the previous value, joined with one space", async () => {
    expect((await response("/folded")).headers["x-note"]).toBe("a b");
  });
});

describe("contradictions", () => {
  it("two different Location headers are an invalid response that says so", async () => {
    expect(await failure("/two-locations")).toMatchObject({
      stage: "http",
      cause: "CONFLICTING_LOCATION",
      reason: "The server sent an invalid HTTP response: two different Location headers",
    });
    expect(await checkedResult(url("/two-locations"), env)).toMatchObject({
      status: "down",
      failedStage: "http",
      reason: "The server sent an invalid HTTP response: two different Location headers",
    });
  });

  it("the same Location twice is followed", async () => {
    expect(await checkedResult(url("/same-location-twice"), env)).toMatchObject({
      status: "up",
      statusCode: 200,
      finalUrl: url("/landed"),
    });
  });

  it.each(["/te-and-cl", "/bad-length"])("framing headers of a body never read (%s) do not make the site down", async (path) => {
    expect(await checkedResult(url(path), env)).toMatchObject({ status: "up", statusCode: 200 });
  });
});
