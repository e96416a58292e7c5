import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RESPONSE_HEADER_FIELDS } from "../../src/probe/http/exchange-types.js";
import { failureCode } from "../../src/shared/failures.js";
import { headerValue } from "../../src/probe/http/header-map.js";
import type { HopOutcome, HopResponse } from "../../src/probe/hop-types.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type RawH2Target, startRawH2Target } from "../fixtures/raw-h2-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { type TestEnv, createTestEnv, checkSite } from "../fixtures/test-env.js";

/**
 * Header fields a hostile site chooses (issue 28, rows 7 and 8, item 4), over
 * HTTP/1.1 and HTTP/2, and in the threaded project across the thread bridge:
 * names that are Object.prototype's are ordinary fields; two different
 * Locations are refused on both protocols; a head of more fields than the
 * bound is too large on both.
 */
const PROTO_FIELDS: readonly (readonly [string, string])[] = [
  ["__proto__", "a"],
  ["__proto__", "b"],
  ["constructor", "c"],
  ["tostring", "d"],
  ["hasownproperty", "e"],
];
const TOO_MANY = MAX_RESPONSE_HEADER_FIELDS + 10;

let env: TestEnv;
let http1: HttpTargets;
const h2: Record<string, RawH2Target> = {};

function rawHead(status: string, fields: readonly (readonly [string, string])[]): string {
  return `HTTP/1.1 ${status}\r\n${fields.map(([name, value]) => `${name}: ${value}\r\n`).join("")}content-length: 0\r\nconnection: close\r\n\r\n`;
}

beforeAll(async () => {
  const pki = await getTestPki();
  const many = Array.from({ length: TOO_MANY }, (_, i) => ["x", String(i)] as const);
  http1 = await startHttpTargets({
    routes: {
      "/proto": { kind: "raw", data: rawHead("200 OK", PROTO_FIELDS) },
      "/two-locations": {
        kind: "raw",
        data: rawHead("301 Moved", [
          ["location", "/a"],
          ["location", "/b"],
        ]),
      },
      "/many": { kind: "raw", data: rawHead("200 OK", many) },
      "/enough": { kind: "raw", data: rawHead("200 OK", many.slice(0, MAX_RESPONSE_HEADER_FIELDS - 2)) },
    },
  });
  // HTTP/2 targets answering every request with exactly these fields, in order, repeats included, and no body.
  const h2Head = (fields: readonly (readonly [string, string])[]) =>
    startRawH2Target(pki.valid, () => [{ kind: "headers", fields, endStream: true }]);
  h2.proto = await h2Head([[":status", "200"], ...PROTO_FIELDS]);
  h2.twoLocations = await h2Head([
    [":status", "301"],
    ["location", "/a"],
    ["location", "/b"],
  ]);
  h2.sameLocations = await h2Head([
    [":status", "200"],
    ["location", "/a"],
    ["location", "/a"],
  ]);
  h2.many = await h2Head([[":status", "200"], ...many]);
  env = createTestEnv({ ca: pki.caPem, siteTimeoutMs: 5_000 });
});

afterAll(async () => {
  await env.close();
  await http1.close();
  await Promise.all(Object.values(h2).map((target) => target.close()));
});

async function hop(url: string): Promise<HopOutcome> {
  return env.prober.hop({ url: new URL(url), method: "GET", timeoutMs: 5_000, ports: { kind: "fetch-safe" } });
}

function responseOf(outcome: HopOutcome): HopResponse {
  if (outcome.kind !== "response") throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
  return outcome.response;
}

function codeOf(outcome: HopOutcome): string {
  return outcome.kind === "failure" ? failureCode(outcome.failure) : outcome.kind;
}

const PROTOCOLS = [
  ["HTTP/1.1", () => http1.url("/proto"), "1.1"],
  ["HTTP/2", () => h2.proto?.url ?? "", "2"],
] as const;

describe.each(PROTOCOLS)("header fields named like Object.prototype's members over %s", (_name, url, version) => {
  it("are ordinary fields of the response", async () => {
    const response = responseOf(await hop(url()));
    expect(response).toMatchObject({ status: 200, httpVersion: version });
    expect(headerValue(response.headers, "__proto__")).toEqual(["a", "b"]);
    expect(headerValue(response.headers, "constructor")).toBe("c");
    expect(headerValue(response.headers, "tostring")).toBe("d");
    expect(headerValue(response.headers, "hasownproperty")).toBe("e");
    // A name the site did not send is absent, whatever the object's prototype has.
    expect(headerValue(response.headers, "valueOf")).toBeUndefined();
    expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(["__proto__", "constructor"]));
  });

  it("leave the site up", async () => {
    const outcome = await checkSite(url(), env, undefined, { details: true });
    expect(outcome).toMatchObject({ kind: "result", result: { status: "up", statusCode: 200 } });
  });
});

describe("two Location fields", () => {
  it.each([
    ["HTTP/1.1", () => http1.url("/two-locations")],
    ["HTTP/2", () => h2.twoLocations?.url ?? ""],
  ] as const)("that differ are refused over %s as a browser refuses them", async (_name, url) => {
    expect(codeOf(await hop(url()))).toBe("http_conflicting_location");
    const outcome = await checkSite(url(), env, undefined, { details: true });
    expect(outcome).toMatchObject({
      kind: "result",
      result: { status: "down", failedStage: "http", details: { code: "http_conflicting_location" } },
    });
  });

  it("that repeat one value are harmless over HTTP/2 too", async () => {
    const response = responseOf(await hop(h2.sameLocations?.url ?? ""));
    expect(response.locationHeader).toBe("/a");
  });
});

describe("a head of more fields than the bound", () => {
  it.each([
    ["HTTP/1.1", () => http1.url("/many")],
    ["HTTP/2", () => h2.many?.url ?? ""],
  ] as const)(`(${TOO_MANY} fields) is too large over %s`, async (_name, url) => {
    expect(codeOf(await hop(url()))).toBe("http_headers_too_large");
  });

  it("is not reached by a head of exactly the bound", async () => {
    expect(responseOf(await hop(http1.url("/enough"))).status).toBe(200);
  });
});
