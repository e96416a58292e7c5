import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Prober } from "../../src/probe/hop-types.js";
import { readRdapDomain } from "../../src/registration/rdap-answer.js";
import { MAX_BOOTSTRAP_NAMES, parseRdapBootstrap, rdapServiceFor } from "../../src/registration/rdap-bootstrap.js";
import {
  clearRegistrationCache,
  lookUpRegistration,
  type Registration,
  registrableDomain,
  registrationWithin,
} from "../../src/registration/registration-lookup.js";
import { registrationWarnings } from "../../src/registration/registration-warnings.js";
import { startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { rdapDomain } from "../fixtures/rdap-answers.js";
import { loopbackProber } from "../fixtures/test-env.js";

// The domain's registration: one RDAP lookup over the check's own prober, bounded, cached, refused where the policy says.
let rdap: HttpTargets;
let prober: Prober;
let dir: string;
let bootstrap: string;

beforeAll(async () => {
  const pki = await getTestPki();
  rdap = await startHttpTargets({ tls: pki.valid });
  prober = loopbackProber({ ca: pki.caPem });
  dir = mkdtempSync(join(tmpdir(), "sitediag-rdap-"));
  bootstrap = join(dir, "dns.json");
  writeFileSync(
    bootstrap,
    JSON.stringify({
      version: "1.0",
      services: [
        [
          ["test", "example"],
          [`http://127.0.0.1:${rdap.httpPort}/plain/`, rdap.url("/rdap/", { secure: true })],
        ],
      ],
    }),
  );
});

afterAll(async () => {
  await prober.close();
  await rdap.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => clearRegistrationCache());

async function lookUp(host: string, file = bootstrap): Promise<Registration> {
  const pending = lookUpRegistration(prober, host, file);
  if (pending === null) throw new Error(`no registrable domain for ${host}`);
  return registrationWithin(pending, 10_000);
}

const asked = (path: string) => rdap.requests.filter((request) => request.target === path).length;

describe("one lookup of the service the bootstrap names", () => {
  it("the registrable domain's answer: registrar, dates, status, over https with the test CA; cached: a second check asks nothing", async () => {
    rdap.route("/rdap/domain/site.test", {
      kind: "respond",
      status: 200,
      headers: { "content-type": "application/rdap+json" },
      body: rdapDomain("site.test"),
    });
    const found = await lookUp("www.site.test");
    expect(found).toMatchObject({
      domain: "site.test",
      state: "found",
      rdapUrl: rdap.url("/rdap/domain/site.test", { secure: true }),
      registrar: "Example Registrar, Inc.",
      created: "2001-02-03T04:05:06.000Z",
      status: ["client transfer prohibited"],
      suspended: false,
    });
    expect(registrationWarnings(found, 30).map(({ code, severity }) => [code, severity])).toEqual([["domain_expires_soon", "warning"]]);
    expect(registrationWarnings(found, 5)).toEqual([]);
    expect(await lookUp("other.site.test")).toEqual(found);
    expect(asked("/rdap/domain/site.test")).toBe(1);
    expect(rdap.requests.some((request) => request.target.startsWith("/plain/"))).toBe(false);
  });

  it("on hold and expired: domain_on_hold and domain_expired, problems", async () => {
    rdap.route("/rdap/domain/held.test", {
      kind: "respond",
      status: 200,
      body: rdapDomain("held.test", {
        status: ["server hold"],
        events: [{ eventAction: "expiration", eventDate: "2020-01-01T00:00:00Z" }],
      }),
    });
    const held = await lookUp("held.test");
    expect(held).toMatchObject({ state: "found", suspended: true, expires: "2020-01-01T00:00:00.000Z" });
    expect(registrationWarnings(held, 30).map(({ code, severity }) => [code, severity])).toEqual([
      ["domain_on_hold", "problem"],
      ["domain_expired", "problem"],
    ]);
  });

  it("no service, an IP literal, a bare public suffix: nothing asked", async () => {
    expect(await lookUp("site.invalidtld")).toEqual({
      domain: "site.invalidtld",
      state: "unknown",
      unknownReason: "no_service",
      rdapUrl: null,
    });
    expect(lookUpRegistration(prober, "127.0.0.1", bootstrap)).toBeNull();
    expect(lookUpRegistration(prober, "[::1]", bootstrap)).toBeNull();
    expect(registrableDomain("co.uk")).toBeNull();
    expect(registrableDomain("a.b.example.co.uk")).toBe("example.co.uk");
    // The ICANN section only: a private suffix's customer is no registration of its own.
    expect(registrableDomain("someone.github.io")).toBe("github.io");
  });
});

describe("hostile registries", () => {
  it("10 MB: too_large, read no further than the bound; invalid JSON and an error status: unknown", async () => {
    rdap.route("/rdap/domain/huge.test", { kind: "respond", status: 200, body: `{"x":"${"a".repeat(10 * 1024 * 1024)}"}` });
    rdap.route("/rdap/domain/broken.test", { kind: "respond", status: 200, body: "{not json" });
    rdap.route("/rdap/domain/deep.test", { kind: "respond", status: 200, body: "[".repeat(60_000) });
    rdap.route("/rdap/domain/gone.test", { kind: "respond", status: 404, body: "{}" });
    const reasons = await Promise.all(
      ["huge", "broken", "deep", "gone"].map(async (name) => (await lookUp(`${name}.test`)) as { unknownReason?: string }),
    );
    expect(reasons.map((registration) => registration.unknownReason)).toEqual([
      "too_large",
      "invalid_answer",
      "invalid_answer",
      "http_status",
    ]);
  });

  it("an answer that never comes: the diagnostic's grace ends first (unfinished); the lookup itself ends at its own 3 s (timeout)", async () => {
    rdap.route("/rdap/domain/endless.test", { kind: "hang" });
    const pending = lookUpRegistration(prober, "endless.test", bootstrap);
    if (pending === null) throw new Error("no domain");
    expect(await registrationWithin(pending, 50)).toEqual({
      domain: "endless.test",
      state: "unknown",
      unknownReason: "unfinished",
      rdapUrl: null,
    });
    expect(await pending.answer).toMatchObject({ state: "unknown", unknownReason: "timeout" });
  });

  it("a body that never ends: read only until the lookup's own 3 s, then unknown, never a cut answer taken as whole", async () => {
    const pki = await getTestPki();
    const dribbling: Server = createServer({ ...pki.valid }, (_request, response) => {
      response.writeHead(200, { "content-type": "application/rdap+json", "content-length": "100000" });
      response.write('{"objectClassName":"domain","status":["active"');
    });
    dribbling.listen(0, "127.0.0.1");
    await new Promise((resolve) => dribbling.once("listening", resolve));
    const { port } = dribbling.address() as AddressInfo;
    const file = join(dir, "dribbling.json");
    writeFileSync(file, JSON.stringify({ services: [[["test"], [`https://127.0.0.1:${port}/`]]] }));
    try {
      const pending = lookUpRegistration(prober, "dribble.test", file);
      if (pending === null) throw new Error("no domain");
      expect(await registrationWithin(pending, 50)).toMatchObject({ state: "unknown", unknownReason: "unfinished" });
      expect(await pending.answer).toMatchObject({ state: "unknown", unknownReason: "invalid_answer" });
    } finally {
      dribbling.closeAllConnections();
      await new Promise((resolve) => dribbling.close(resolve));
    }
  });

  it("a slow answer is still read when it comes within the lookup's time", async () => {
    rdap.route("/rdap/domain/slow.test", {
      kind: "delayed",
      delayMs: 300,
      then: { kind: "respond", status: 200, body: rdapDomain("slow.test") },
    });
    expect(await lookUp("slow.test")).toMatchObject({ state: "found" });
  });

  it("a bootstrap naming an address the policy refuses: refused, nothing sent", async () => {
    const pki = await getTestPki();
    const listener: Server = createServer({ ...pki.valid });
    let connections = 0;
    listener.on("connection", () => (connections += 1));
    listener.listen(0, "127.0.0.2");
    await new Promise((resolve) => listener.once("listening", resolve));
    const { port } = listener.address() as AddressInfo;
    const privateFile = join(dir, "private.json");
    writeFileSync(privateFile, JSON.stringify({ services: [[["test"], [`https://127.0.0.2:${port}/rdap/`]]] }));
    const narrow = loopbackProber({ ca: pki.caPem, allowCidrs: ["127.0.0.1/32"] });
    try {
      const pending = lookUpRegistration(narrow, "inside.test", privateFile);
      expect(await pending?.answer).toEqual({
        domain: "inside.test",
        state: "unknown",
        unknownReason: "refused",
        rdapUrl: `https://127.0.0.2:${port}/rdap/domain/inside.test`,
      });
      expect(connections).toBe(0);
    } finally {
      await narrow.close();
      await new Promise((resolve) => listener.close(resolve));
    }
  });

  it("thousands of bootstrap entries: kept to the bound, each found by its longest suffix; http-only services left out", () => {
    const services = Array.from({ length: 30_000 }, (_, i) => [[`tld${i}`, `x${i}.tld${i}`], [`https://rdap${i}.example/`]]);
    const table = parseRdapBootstrap(JSON.stringify({ services: [[["plain"], ["http://rdap.example/"]], ...services] }));
    expect(table.size).toBe(MAX_BOOTSTRAP_NAMES);
    expect(rdapServiceFor(table, "a.x7.tld7")).toBe("https://rdap7.example/");
    expect(rdapServiceFor(table, "a.tld29999")).toBeNull();
    expect(rdapServiceFor(table, "a.plain")).toBeNull();
    for (const bad of ["", "null", "[]", '{"services": 5}', '{"services": [[1, 2], [["x"], [7]]]}'])
      expect(parseRdapBootstrap(bad).size, bad).toBe(0);
  });

  it("an answer's texts: control characters replaced, lengths cut, lists bounded", () => {
    const facts = readRdapDomain(
      Buffer.from(
        JSON.stringify({
          status: Array.from({ length: 40 }, () => "client\u001b[2J hold"),
          events: [{ eventAction: "expiration", eventDate: "not a date" }],
          entities: [{ roles: ["registrar"], vcardArray: ["vcard", [["fn", {}, "text", `\u202eevil${"x".repeat(500)}`]]] }],
        }),
      ),
    );
    expect(facts?.status).toHaveLength(16);
    expect(facts?.status[0]).toBe("client\ufffd[2J hold");
    expect(facts?.registrar?.length).toBeLessThanOrEqual(120);
    expect(facts?.registrar?.startsWith("\ufffdevil")).toBe(true);
    expect(facts?.expires).toBeNull();
    expect(readRdapDomain(Buffer.from("[1]"))).toBeNull();
  });
});
