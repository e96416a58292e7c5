/**
 * The page's "Name resolution" section, in Chromium against `sitediag serve`
 * as its own process (page-rig.ts), resolving through the loopback DNS
 * fixture and a hosts file of the test's own: a CNAME chain with TTLs, the
 * hosts file named, NXDOMAIN beside its code, and a hostile CNAME target set
 * as text.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-name-resolution.png; otherwise it goes to a temp dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");

describe.skipIf(!chromium.available)("the page's name resolution, in Chromium", () => {
  let dns: DnsServer;
  let targets: HttpTargets;
  let rig: PageRig;
  let hostsDir: string;
  let hostsFile: string;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;
  const named = (host: string, path: string) => `http://${host}:${targets.httpPort}${path}`;

  beforeAll(async () => {
    dns = await startDnsServer();
    dns.answer("www.page.test", { cname: "cdn.page.test", ttl: 3600 });
    dns.answer("cdn.page.test", { cname: "edge.page.test", ttl: 600 });
    dns.answer("edge.page.test", { a: ["127.0.0.1"], ttl: 60 });
    dns.answer("gone.page.test", "nxdomain");
    dns.answer("odd.page.test", { cname: "<img src=x onerror=alert(1)>\u202e.page.test" });
    dns.answer("<img src=x onerror=alert(1)>\u202e.page.test", { a: ["127.0.0.1"] });
    targets = await startHttpTargets();
    targets.route("/start", () => ({ kind: "redirect", status: 301, location: named("listed.page.test", "/next") }));
    targets.route("/next", () => ({ kind: "redirect", status: 302, location: named("gone.page.test", "/") }));
    targets.route("/ok", () => ({ kind: "respond", status: 200 }));
    hostsDir = mkdtempSync(join(tmpdir(), "sitediag-page-hosts-"));
    hostsFile = join(hostsDir, "hosts");
    writeFileSync(hostsFile, "127.0.0.1 listed.page.test\n");
    rig = await startPageRig("page-name-resolution", {
      SITEDIAG_DNS_SERVERS: dns.server,
      SITEDIAG_HOSTS_FILE: hostsFile,
      SITEDIAG_TRACE_PORTS: String(targets.httpPort),
    });
  });

  afterAll(async () => {
    await rig?.close();
    await Promise.all([targets?.close(), dns?.close()]);
    rmSync(hostsDir, { recursive: true, force: true });
  });

  afterEach(() => rig.settle());

  const open = () => rig.open("/", { viewport: { width: 1280, height: 900 } });

  async function resolutionRows(page: Page): Promise<string[][]> {
    return page
      .locator("#result table.resolution-table tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell as unknown as { readonly innerText: string }).innerText)));
  }

  it("a trace through a CNAME chain to a name that does not exist: one row per lookup, the rows that used it, the rcode beside the code", async () => {
    const page = await open();
    await askOnPage(page, named("www.page.test", "/start"), "Trace redirects", rig.key, 20_000);
    expect(await page.locator("#name-resolution-heading").textContent()).toBe("Name resolution");
    const rows = await resolutionRows(page);
    expect(rows.map((row) => row[1]?.split("\n")[0])).toEqual(["www.page.test", "listed.page.test", "gone.page.test"]);
    const [chain, listed, gone] = rows;
    expect(chain?.[0]).toBe("1");
    expect(chain?.[1]).toBe("www.page.test\n→ CNAME cdn.page.test\n→ CNAME edge.page.test");
    expect(chain?.[2]).toBe("127.0.0.1 TTL 60 s");
    expect(chain?.[3]).toBe(`configured: ${dns.server}`);
    expect(chain?.[4]).toMatch(/^\d+\.\d ms$/);
    expect(listed?.slice(2, 4)).toEqual(["127.0.0.1", `hosts file ${hostsFile}`]);
    expect(gone?.[2]).toBe("NXDOMAIN · dns_no_such_host");
    await page.screenshot({ path: join(screenshots ?? rig.dir, "page-name-resolution.png"), fullPage: true });
  });

  it("a hostile CNAME target is text, not markup", async () => {
    const page = await open();
    await askOnPage(page, named("odd.page.test", "/ok"), "Is it down?", rig.key, 20_000);
    const rows = await resolutionRows(page);
    // c-ares writes the override's bytes as \DDD (and parentheses escaped); the angle brackets stay text.
    expect(rows[0]?.[1]?.split("\n").slice(0, 2)).toEqual([
      "odd.page.test",
      "→ CNAME <img src=x onerror=alert\\(1\\)>\\226\\128\\174.page.test",
    ]);
    expect(await page.locator("#result table.resolution-table img").count()).toBe(0);
  });
});
