import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locationText } from "../../src/probe/http/header-map.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import { type RawTarget, startRawTarget } from "../fixtures/raw-targets.js";
import { checkedResult, createTestEnv, type TestEnv } from "../fixtures/test-env.js";

describe("locationText: Location bytes read as browsers read them", () => {
  const latin1 = (bytes: number[]) => Buffer.from(bytes).toString("latin1");
  it.each([
    ["ASCII stays as it is", "/plain/path?q=1#f", "/plain/path?q=1#f"],
    ["UTF-8 in the path", latin1([0x2f, 0x63, 0x61, 0x66, 0xc3, 0xa9, 0x2f]), "/café/"],
    ["UTF-8 in the query and fragment", latin1([0x2f, 0x3f, 0x71, 0x3d, 0xc3, 0xbc, 0x23, 0xe2, 0x82, 0xac]), "/?q=ü#€"],
    ["a UTF-8 host", latin1([...Buffer.from("https://b"), 0xc3, 0xbc, ...Buffer.from("cher.test/")]), "https://bücher.test/"],
    ["a four-byte character", latin1([0x2f, 0xf0, 0x9f, 0x94, 0x91]), "/\u{1F511}"],
    ["invalid UTF-8: each high byte percent-encoded", latin1([0x2f, 0xe9, 0x74, 0xe9]), "/%E9t%E9"],
    ["an overlong slash is never a slash", latin1([0x2f, 0x61, 0xc0, 0xaf, 0x62]), "/a%C0%AFb"],
    ["a truncated sequence", latin1([0x2f, 0xe2, 0x82]), "/%E2%82"],
    ["text already beyond Latin-1 is left alone", "/déjà-vu-\u2603", "/déjà-vu-\u2603"],
  ])("%s", (_name, raw, expected) => {
    expect(locationText(raw)).toBe(expected);
  });
});

describe("targets a browser handles", () => {
  let env: TestEnv;
  let dns: DnsServer;
  let target: RawTarget;

  beforeAll(async () => {
    dns = await startDnsServer();
    dns.answer("xn--bcher-kva.test", { a: ["127.0.0.1"] });
    dns.answer("site.test", { a: ["127.0.0.1"] });
    env = createTestEnv({ dnsServers: [dns.server], siteTimeoutMs: 3_000 });
    target = await startRawTarget({
      kind: "bytes",
      answer: (path) => {
        const port = target.port;
        const ok = Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok", "latin1");
        if (path === "/cookies") {
          // A 20 KiB head: an app that sets many cookies, behind a proxy. Browsers take up to 256 KiB.
          const cookies = Array.from({ length: 80 }, (_, i) => `set-cookie: c${i}=${"v".repeat(240)}; Path=/\r\n`).join("");
          return Buffer.from(`HTTP/1.1 200 OK\r\n${cookies}content-length: 2\r\nconnection: close\r\n\r\nok`, "latin1");
        }
        if (path === "/utf8-path")
          return Buffer.concat([
            Buffer.from("HTTP/1.1 301 Moved\r\nlocation: /caf"),
            Buffer.from("é/", "utf8"),
            Buffer.from("\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"),
          ]);
        if (path === "/utf8-host")
          return Buffer.concat([
            Buffer.from("HTTP/1.1 302 Found\r\nlocation: http://b"),
            Buffer.from("ü", "utf8"),
            Buffer.from(`cher.test:${port}/landed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`),
          ]);
        if (path === "/caf%C3%A9/" || path === "/landed") return ok;
        return Buffer.from("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n", "latin1");
      },
    });
  });
  afterAll(async () => {
    await target?.close();
    await env?.close();
    await dns?.close();
  });

  it("a 20 KiB response head is up (it was down: 'response headers that are too large')", async () => {
    const result = await checkedResult(`http://site.test:${target.port}/cookies`, env);
    expect(result).toMatchObject({ status: "up", statusCode: 200, failedStage: null });
  });

  it("raw UTF-8 in a Location path lands where a browser lands, /caf%C3%A9/", async () => {
    const result = await checkedResult(`http://site.test:${target.port}/utf8-path`, env);
    expect(result).toMatchObject({ status: "up", statusCode: 200, finalUrl: `http://site.test:${target.port}/caf%C3%A9/` });
  });

  it("a raw UTF-8 host in a Location is looked up as its punycode name", async () => {
    const result = await checkedResult(`http://site.test:${target.port}/utf8-host`, env);
    expect(result).toMatchObject({ status: "up", statusCode: 200, finalUrl: `http://xn--bcher-kva.test:${target.port}/landed` });
    expect(dns.queries.some((query) => query.name === "xn--bcher-kva.test")).toBe(true);
  });
});
