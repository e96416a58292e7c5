import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProber } from "../../src/probe/prober.js";
import type { HopOutcome, Prober } from "../../src/probe/hop-types.js";
import { USER_AGENT } from "../../src/package-info.js";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { getTestPki } from "../fixtures/test-ca.js";

const ANY_PORT = { kind: "fetch-safe" } as const;
const servers: Server[] = [];
let prober: Prober;
let dns: DnsServer;
let httpBase: string;
let httpsBase: string;
const seen: { method?: string; headers?: Record<string, unknown>; url?: string } = {};

function listen(server: Server): Promise<number> {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

function route(req: IncomingMessage, res: ServerResponse): void {
  seen.method = req.method;
  seen.headers = req.headers;
  seen.url = req.url;
  if (req.url === "/moved") {
    res.writeHead(301, { location: "../elsewhere?x=1" });
    res.end();
  } else if (req.url === "/custom-reason") {
    res.statusCode = 299;
    res.statusMessage = "Quite Fine";
    res.end("x");
  } else {
    res.setHeader("set-cookie", ["a=1", "b=2"]);
    res.end("hello");
  }
}

beforeAll(async () => {
  const pki = await getTestPki();
  httpBase = `http://127.0.0.1:${await listen(createHttpServer(route))}`;
  httpsBase = `https://localhost:${await listen(createHttpsServer({ ...pki.valid }, route))}`;
  // The certificate names "localhost": the loopback DNS fixture answers it, so no query leaves the machine.
  dns = await startDnsServer();
  dns.answer("localhost", { a: ["127.0.0.1"] });
  prober = createProber({ allowCidrs: ["127.0.0.0/8", "::1/128"], dnsServers: [dns.server], ca: pki.caPem, userAgent: USER_AGENT });
});

afterAll(async () => {
  await prober.close();
  await dns.close();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

function expectResponse(outcome: HopOutcome) {
  if (outcome.kind !== "response") throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
  return outcome.response;
}

describe("prober.hop over http", () => {
  it("answers status, reason phrase, headers and the address dialled", async () => {
    const response = expectResponse(
      await prober.hop({ url: new URL(`${httpBase}/ok?q=1#frag`), method: "GET", timeoutMs: 3_000, ports: ANY_PORT }),
    );
    expect(response.status).toBe(200);
    expect(response.statusText).toBe("OK");
    expect(response.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(response.remoteAddress).toBe("127.0.0.1");
    expect(response.remoteFamily).toBe(4);
    expect(response.tls).toBeNull();
    expect(response.timings.dnsMs).toBeNull();
    expect(response.timings.tlsMs).toBeNull();
    expect(seen.url).toBe("/ok?q=1");
    expect(seen.method).toBe("GET");
    expect(seen.headers?.["user-agent"]).toBe(USER_AGENT);
    expect(seen.headers?.accept).toBe("*/*");
  });

  it("resolves Location against the hop URL and keeps the raw header", async () => {
    const response = expectResponse(
      await prober.hop({ url: new URL(`${httpBase}/moved`), method: "HEAD", timeoutMs: 3_000, ports: ANY_PORT }),
    );
    expect(response.status).toBe(301);
    expect(response.statusText).toBe("Moved Permanently");
    expect(response.locationHeader).toBe("../elsewhere?x=1");
    expect(response.location).toBe(`${httpBase}/elsewhere?x=1`);
    expect(seen.method).toBe("HEAD");
  });

  it("reports the server's own reason phrase", async () => {
    const response = expectResponse(
      await prober.hop({ url: new URL(`${httpBase}/custom-reason`), method: "GET", timeoutMs: 3_000, ports: ANY_PORT }),
    );
    expect(response.status).toBe(299);
    expect(response.statusText).toBe("Quite Fine");
  });
});

describe("prober.hop over https", () => {
  it("verifies the certificate against the host name and summarises it", async () => {
    const response = expectResponse(
      await prober.hop({ url: new URL(`${httpsBase}/ok`), method: "GET", timeoutMs: 3_000, ports: ANY_PORT }),
    );
    expect(response.status).toBe(200);
    expect(response.tls?.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(response.tls?.certificate?.subjectName).toContain("CN=localhost");
    expect(response.tls?.certificate?.issuerName).toContain("CN=sitediag test CA");
    expect(Date.parse(response.tls?.certificate?.validTo ?? "")).toBeGreaterThan(Date.now());
    expect(response.timings.dnsMs).not.toBeNull();
    expect(response.timings.tlsMs).not.toBeNull();
  });
});
