import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckSiteResponseSchema, DiagnosticsService, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { createResponseValidator } from "../fixtures/response-validator.js";

// details.resolutions and requests[].resolution on every door, valid against the OpenAPI document.
let dns: DnsServer;
let targets: HttpTargets;
let service: TestService;
let dir: string;
let hostsFile: string;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.answer("www.doors.test", { cname: "edge.doors.test", ttl: 600 });
  dns.answer("edge.doors.test", { a: ["127.0.0.1"], ttl: 45 });
  dns.answer("gone.doors.test", "nxdomain");
  dns.answer("refusing.doors.test", "refused");
  dns.answer("bogus.doors.test", { rcode: "servfail", ede: [{ code: 6, text: "sig \u001b[2J expired" }] });
  // Hostile: a 200-link CNAME loop, 500 A records, a target past 255 bytes with odd bytes.
  for (let i = 0; i < 200; i++) dns.answer(`l${i}.ring.doors.test`, { cname: `l${(i + 1) % 200}.ring.doors.test` });
  dns.answer("many.doors.test", {
    a: ["127.0.0.1", ...Array.from({ length: 499 }, (_, i) => `127.0.${1 + (i >> 8)}.${i & 255}`)],
    ttl: 4_294_967_295,
  });
  dns.answer("long.doors.test", {
    cname: `${Array.from({ length: 5 }, () => `\u0007${"\u202e".repeat(20)}${"x".repeat(2)}`).join(".")}.test`,
  });
  dns.answer("odd.doors.test", { cname: "a\u0007\u202e\u0000b.doors.test" });
  dir = mkdtempSync(join(tmpdir(), "sitediag-names-"));
  hostsFile = join(dir, "hosts");
  writeFileSync(hostsFile, "127.0.0.1 listed.doors.test\n");
  targets = await startHttpTargets();
  targets.route("/start", () => ({ kind: "redirect", status: 301, location: `http://listed.doors.test:${targets.httpPort}/end` }));
  targets.route("/end", () => ({ kind: "respond", status: 200 }));
  targets.route("/to-gone", () => ({ kind: "redirect", status: 302, location: `http://gone.doors.test:${targets.httpPort}/` }));
  service = await startTestService({ config: { dnsServers: [dns.server], hostsFile, tracePorts: [targets.httpPort] } });
});

afterAll(async () => {
  await service?.close();
  await Promise.all([targets?.close(), dns?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const named = (host: string, path: string) => `http://${host}:${targets.httpPort}${path}`;

async function rest(tool: "is-site-down" | "redirect-check", url: string): Promise<JsonObject> {
  const response = await fetch(`${service.url}/api/v1/${tool}?${new URLSearchParams({ url, details: "true" }).toString()}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as JsonObject;
  expect(createResponseValidator(openApiDocumentJson()).body(`/api/v1/${tool}`, 200, body)).toEqual([]);
  return (body["data"] as JsonObject)["details"] as JsonObject;
}

const indexes = (details: JsonObject) => (details["requests"] as JsonObject[]).map((request) => request["resolution"]);
const timeless = (details: JsonObject): JsonObject[] =>
  (details["resolutions"] as JsonObject[]).map((resolution) => ({ ...resolution, timeMs: typeof resolution["timeMs"] }));

describe("resolutions through REST", () => {
  it("is-site-down: the CNAME chain with TTLs from the configured server, then the hosts file, each request pointing at its own", async () => {
    const details = await rest("is-site-down", named("www.doors.test", "/start"));
    expect(indexes(details)).toEqual([0, 1]);
    expect(timeless(details)).toEqual([
      {
        name: "www.doors.test",
        queryTypes: ["A", "AAAA"],
        source: { kind: "configured", path: null, servers: [dns.server] },
        cnameChain: ["edge.doors.test"],
        cnameChainEnd: "complete",
        answers: [{ address: "127.0.0.1", family: 4, ttl: 45 }],
        answersOmitted: 0,
        timeMs: "number",
        code: null,
        rcode: null,
        dnssec: "unvalidated",
        extendedErrors: [],
      },
      {
        name: "listed.doors.test",
        queryTypes: ["A", "AAAA"],
        source: { kind: "hosts_file", path: hostsFile, servers: [] },
        cnameChain: [],
        cnameChainEnd: "not_asked",
        answers: [{ address: "127.0.0.1", family: 4, ttl: null }],
        answersOmitted: 0,
        timeMs: "number",
        code: null,
        rcode: null,
        dnssec: "unknown",
        extendedErrors: [],
      },
    ]);
    const first = (details["requests"] as JsonObject[])[0]?.["timings"] as JsonObject;
    expect((details["resolutions"] as JsonObject[])[0]?.["timeMs"]).toBe(first["dnsMs"]);
  });

  it("redirect-check: NXDOMAIN behind a redirect, its code beside its rcode", async () => {
    const details = await rest("redirect-check", named("www.doors.test", "/to-gone"));
    expect(details["code"]).toBe("dns_no_such_host");
    expect(indexes(details)).toEqual([0, 1]);
    expect((details["resolutions"] as JsonObject[])[1]).toMatchObject({
      name: "gone.doors.test",
      answers: [],
      code: "dns_no_such_host",
      rcode: "NXDOMAIN",
    });
  });

  it("is-site-down: REFUSED, with dns_query_refused; the CNAME query is refused too, so the chain is unknown (failed)", async () => {
    const details = await rest("is-site-down", named("refusing.doors.test", "/end"));
    expect(timeless(details)[0]).toMatchObject({
      name: "refusing.doors.test",
      code: "dns_query_refused",
      rcode: "REFUSED",
      cnameChainEnd: "failed",
    });
  });

  it("an IP-address host: no resolution, and an empty list", async () => {
    const details = await rest("is-site-down", targets.url("/end"));
    expect(indexes(details)).toEqual([null]);
    expect(details["resolutions"]).toEqual([]);
  });
});

describe("hostile answers through REST: bounded, escaped, valid against the document", () => {
  it("a 200-link CNAME loop: 8 links and too_long; the server's SERVFAIL beside dns_server_failure", async () => {
    const [ring] = timeless(await rest("is-site-down", named("l0.ring.doors.test", "/end")));
    expect(ring).toMatchObject({ cnameChainEnd: "too_long", code: "dns_server_failure", rcode: "SERVFAIL" });
    expect(ring?.["cnameChain"]).toHaveLength(8);
  });

  it("500 A records: 32 shown, 468 counted; a TTL past 2^31 - 1 is clamped", async () => {
    const [many] = timeless(await rest("is-site-down", named("many.doors.test", "/end")));
    expect(many?.["answers"]).toHaveLength(32);
    expect(many).toMatchObject({
      answersOmitted: 468,
      answers: expect.arrayContaining([{ address: "127.0.0.1", family: 4, ttl: 2_147_483_647 }]) as unknown,
    });
  });

  it("odd bytes in a CNAME target arrive as c-ares escapes them; a target past 255 bytes is refused by c-ares, and no chain is shown", async () => {
    const [odd] = timeless(await rest("is-site-down", named("odd.doors.test", "/end")));
    expect(odd?.["cnameChain"]).toEqual(["a\\007\\226\\128\\174\\000b.doors.test"]);
    const [long] = timeless(await rest("is-site-down", named("long.doors.test", "/end")));
    // c-ares reads the over-long target by its version: Node 20's as no such name (the walk is then asked and fails
    // too), Node 22's and 24's as a malformed answer (no rcode: nothing is walked). Either way nothing of it is shown.
    expect([
      { cnameChain: [], cnameChainEnd: "failed", code: "dns_no_such_host", rcode: "NXDOMAIN" },
      { cnameChain: [], cnameChainEnd: "not_asked", code: "dns_malformed_answer", rcode: null },
    ]).toContainEqual({
      cnameChain: long?.["cnameChain"],
      cnameChainEnd: long?.["cnameChainEnd"],
      code: long?.["code"],
      rcode: long?.["rcode"],
    });
    for (const text of [JSON.stringify(odd), JSON.stringify(long)]) {
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    }
  });
});

describe("DNSSEC and Extended DNS Errors through REST and Connect", () => {
  it("SERVFAIL with EDE 6: dns_dnssec_bogus, dnssec bogus, the error with its escaped text; Connect the same", async () => {
    const details = await rest("is-site-down", named("bogus.doors.test", "/"));
    expect(details["code"]).toBe("dns_dnssec_bogus");
    expect((details["resolutions"] as JsonObject[])[0]).toMatchObject({
      dnssec: "bogus",
      rcode: "SERVFAIL",
      code: "dns_dnssec_bogus",
      extendedErrors: [{ infoCode: 6, name: "DNSSEC Bogus", extraText: "sig \ufffd[2J expired" }],
    });
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const check = renderMessage(CheckSiteResponseSchema, await client.checkSite({ url: named("bogus.doors.test", "/"), details: true }));
    expect(timeless(check["details"] as JsonObject)).toEqual(timeless(details));
    expect(check["reason"]).toBe(
      'DNS lookup failed: DNSSEC validation failed (the answer is bogus) (Extended DNS Error 6 DNSSEC Bogus: "sig \ufffd[2J expired")',
    );
  });
});

describe("Connect says the same", () => {
  it("CheckSite and TraceRedirects", async () => {
    const client = createClient(DiagnosticsService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    const check = renderMessage(CheckSiteResponseSchema, await client.checkSite({ url: named("www.doors.test", "/start"), details: true }));
    expect(timeless(check["details"] as JsonObject)).toEqual(timeless(await rest("is-site-down", named("www.doors.test", "/start"))));
    const trace = renderMessage(
      TraceRedirectsResponseSchema,
      await client.traceRedirects({ url: named("www.doors.test", "/to-gone"), details: true }),
    );
    expect(indexes(trace["details"] as JsonObject)).toEqual([0, 1]);
    expect(timeless(trace["details"] as JsonObject)).toEqual(timeless(await rest("redirect-check", named("www.doors.test", "/to-gone"))));
  });
});
