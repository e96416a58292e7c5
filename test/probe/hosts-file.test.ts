import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResolver, parseHostsFile } from "../../src/probe/resolver.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";

describe("parseHostsFile", () => {
  it("reads addresses and names as the C library does", () => {
    const table = parseHostsFile(
      [
        "# a comment line",
        "127.0.0.1\tlocalhost  Local.Test.",
        "::1 localhost ip6-localhost # trailing comment",
        "   ",
        "not-an-ip bogus.test",
        "10.0.0.1",
        "127.0.0.2 local.test",
        "127.0.0.1 localhost",
      ].join("\n"),
    );
    expect(table.get("localhost")).toEqual([
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ]);
    expect(table.get("local.test")).toEqual([
      { address: "127.0.0.1", family: 4 },
      { address: "127.0.0.2", family: 4 },
    ]);
    expect(table.has("bogus.test")).toBe(false);
    expect(table.size).toBe(3);
  });
});

describe("the resolver never waits on a silent name server for a name it does not need it for", () => {
  let dns: DnsServer;
  let dir: string;
  let hostsFile: string;
  beforeAll(async () => {
    dns = await startDnsServer();
    dir = mkdtempSync(join(tmpdir(), "sitediag-hosts-"));
    hostsFile = join(dir, "hosts");
    writeFileSync(hostsFile, "127.0.0.1 listed.test\n::1 listed.test\n");
  });
  afterAll(async () => {
    await dns?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers a hosts-file name, and leaves libuv's thread pool free, while eight lookups hang on DNS", async () => {
    for (let i = 0; i < 8; i++) dns.answer(`silent${i}.test`, "never");
    const resolver = createResolver({ servers: [dns.server], hostsFile });
    // One signal per lookup, as each hop has its own: one signal shared by eight lookups drew a MaxListenersExceededWarning.
    const hanging = Array.from({ length: 8 }, () => new AbortController());
    const pending = hanging.map((controller, i) => resolver.resolve(`silent${i}.test`, controller.signal));

    const started = performance.now();
    const listed = await resolver.resolve("Listed.Test.", AbortSignal.timeout(5_000));
    // A file read runs on the same four threads getaddrinfo would have blocked.
    await readFile(hostsFile);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(listed).toEqual({
      ok: true,
      addresses: [
        { address: "::1", family: 6 },
        { address: "127.0.0.1", family: 4 },
      ],
      // What details show of it: the file it came from, file order, no TTL.
      evidence: {
        source: { kind: "hosts_file", path: hostsFile },
        records: [
          { address: "127.0.0.1", family: 4, ttl: null },
          { address: "::1", family: 6, ttl: null },
        ],
        rcode: null,
      },
    });
    expect(dns.queries.some((query) => query.name.startsWith("listed"))).toBe(false);

    for (const controller of hanging) controller.abort();
    const silent = {
      ok: false,
      code: "ABORTED",
      evidence: { source: { kind: "configured", servers: [dns.server] }, records: [], rcode: null },
    };
    for (const result of await Promise.all(pending)) expect(result).toEqual(silent);
  });

  it("sees an edited hosts file without a restart", async () => {
    const resolver = createResolver({ servers: [dns.server], hostsFile });
    expect(await resolver.resolve("later.test", AbortSignal.timeout(5_000))).toMatchObject({ ok: false });
    writeFileSync(hostsFile, "127.0.0.3 later.test\n");
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(await resolver.resolve("later.test", AbortSignal.timeout(5_000))).toMatchObject({
      ok: true,
      addresses: [{ address: "127.0.0.3", family: 4 }],
      evidence: { source: { kind: "hosts_file" } },
    });
  });
});
