import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { runDiagnose } from "../fixtures/cli-io.js";

// A hosts file names multi.test on 127.0.0.1, 127.0.0.3 and 127.0.0.4: servers listen on .1 and .4, nothing on .3.
let dir: string;
let port: number;
let tlsPort: number;
const servers: Server[] = [];
let env: Record<string, string>;

async function listen(server: Server, host: string, at: number): Promise<number> {
  servers.push(server);
  server.listen(at, host);
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  const pki = await getTestPki();
  dir = mkdtempSync(join(tmpdir(), "sitediag-cli-addresses-"));
  writeFileSync(join(dir, "hosts"), "127.0.0.1 multi.test\n127.0.0.3 multi.test\n127.0.0.4 multi.test\n");
  writeFileSync(join(dir, "ca.pem"), pki.caPem);
  const answer = (_request: unknown, response: { end: (body: string) => void }) => response.end("ok");
  port = await listen(createServer(answer), "127.0.0.1", 0);
  await listen(createServer(answer), "127.0.0.4", port);
  tlsPort = await listen(
    createTlsServer({ key: pki.valid.key, cert: pki.valid.cert, minVersion: "TLSv1.2", maxVersion: "TLSv1.2" }, answer),
    "127.0.0.1",
    0,
  );
  env = {
    SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
    SITEDIAG_HOSTS_FILE: join(dir, "hosts"),
    SITEDIAG_CA_FILE: join(dir, "ca.pem"),
    SITEDIAG_TRACE_PORTS: `${port},${tlsPort}`,
  };
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

describe("sitediag check and trace show every address and the TLS versions", () => {
  it("check: a row per address, the failing one with its code, and address_unreachable with the check's warnings; still UP and exit 0", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [`http://multi.test:${String(port)}/`], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^UP {2}/);
    expect(stdout).toMatch(/^every address$/m);
    expect(stdout).toMatch(/^ {2}127\.0\.0\.1 +IPv4 +200 +connect .*the first request$/m);
    expect(stdout).toMatch(/^ {2}127\.0\.0\.3 +IPv4 +failed at connect \(connect_refused\)/m);
    expect(stdout).toMatch(/^ {2}127\.0\.0\.4 +IPv4 +200 +connect /m);
    expect(stdout).toMatch(
      /^ {2}warning +request 1 +address_unreachable +GET http:\/\/multi\.test:\d+\/ failed at 1 of 3 addresses: 127\.0\.0\.3 \(/m,
    );
  });

  it("trace: the rows, and the warning once, on hop 1", async () => {
    const { code, stdout } = await runDiagnose(traceCommand, [`http://multi.test:${String(port)}/`], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}127\.0\.0\.3 +IPv4 +failed at connect/m);
    expect(stdout.match(/address_unreachable/g)).toHaveLength(1);
  });

  it("check: a line per TLS version, tls13_not_supported as info", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, [`https://127.0.0.1:${String(tlsPort)}/`], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^TLS versions at 127\.0\.0\.1 \(h2 not chosen\)$/m);
    expect(stdout).toMatch(/^ {2}TLS 1\.3 +refused +ERR_SSL_/m);
    expect(stdout).toMatch(/^ {2}TLS 1\.2 +accepted +\S+ +http\/1\.1 +[\d.]+ ms$/m);
    expect(stdout).toMatch(/^ {2}TLS 1\.0 +refused /m);
    expect(stdout).toMatch(/^ {2}info +request 1 +tls13_not_supported /m);
    expect(stdout).not.toContain("every address");
  });
});
