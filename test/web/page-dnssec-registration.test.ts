/**
 * The page's DNSSEC and Domain registration tables, in Chromium against
 * `sitediag serve` as its own process (page-rig.ts): the first host's
 * DNSSEC reading from the loopback DNS fixture (AD flag; SERVFAIL with an
 * Extended DNS Error whose text is hostile markup), and its registration from
 * an RDAP server on loopback (the test CA) named by a bootstrap file.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-dnssec-registration.png; otherwise it goes to a temp dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type DnsServer } from "../fixtures/dns-server.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { rdapDomain } from "../fixtures/rdap-answers.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");

describe.skipIf(!chromium.available)("the page's DNSSEC and domain registration, in Chromium", () => {
  let dns: DnsServer;
  let targets: HttpTargets;
  let rdap: HttpTargets;
  let rig: PageRig;
  let dir: string;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;
  const named = (host: string, path: string) => `http://${host}:${targets.httpPort}${path}`;

  beforeAll(async () => {
    const pki = await getTestPki();
    dns = await startDnsServer();
    dns.answer("www.signed.test", { a: ["127.0.0.1"], ad: true });
    dns.answer("www.bogus.test", { rcode: "servfail", ede: [{ code: 6, text: "<img src=x onerror=alert(1)> RRSIG expired" }] });
    targets = await startHttpTargets();
    targets.route("/ok", () => ({ kind: "respond", status: 200 }));
    rdap = await startHttpTargets({ tls: pki.valid });
    rdap.route("/rdap/domain/signed.test", { kind: "respond", status: 200, body: rdapDomain("signed.test") });
    dir = mkdtempSync(join(tmpdir(), "sitediag-page-rdap-"));
    const bootstrap = join(dir, "dns.json");
    writeFileSync(bootstrap, JSON.stringify({ services: [[["test"], [rdap.url("/rdap/", { secure: true })]]] }));
    rig = await startPageRig("page-dnssec-registration", { SITEDIAG_DNS_SERVERS: dns.server, SITEDIAG_RDAP_BOOTSTRAP_FILE: bootstrap });
  });

  afterAll(async () => {
    await rig?.close();
    await Promise.all([targets?.close(), rdap?.close(), dns?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => rig.settle());

  const open = () => rig.open("/", { viewport: { width: 1280, height: 900 } });

  async function rows(page: Page, table: string): Promise<string[][]> {
    return page
      .locator(`#result table.${table} tbody tr`)
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell as unknown as { readonly innerText: string }).innerText)));
  }

  it("a validated name and its registration expiring in 10 days: two compact tables under the evidence", async () => {
    const page = await open();
    // The service waits 250 ms past a check for the registry; on a busy machine ask again, the lookup having filled its cache.
    let registration: string[][] = [];
    for (let attempt = 1; attempt <= 10; attempt++) {
      await askOnPage(page, named("www.signed.test", "/ok"), "Is it down?", rig.key, 20_000);
      registration = await rows(page, "registration-table");
      if (!(registration[0]?.[1] ?? "").includes("had not answered")) break;
    }
    expect(await page.locator("#dnssec-heading").textContent()).toBe("DNSSEC");
    expect(await rows(page, "dnssec-table")).toEqual([["www.signed.test", "validated", "–"]]);
    expect(await page.locator("#registration-heading").textContent()).toBe("Domain registration");
    expect(registration[0]?.slice(0, 3)).toEqual(["signed.test", "Example Registrar, Inc.", "2001-02-03"]);
    expect(registration[0]?.[3]).toMatch(/^\d{4}-\d{2}-\d{2} in 10 days$/);
    expect(registration[0]?.[4]).toBe("client transfer prohibited");
    await page.screenshot({ path: join(screenshots ?? rig.dir, "page-dnssec-registration.png"), fullPage: true });
  });

  it("a bogus name: the Extended DNS Error's text is text, not markup", async () => {
    const page = await open();
    await askOnPage(page, named("www.bogus.test", "/ok"), "Is it down?", rig.key, 20_000);
    const dnssec = await rows(page, "dnssec-table");
    expect(dnssec).toEqual([["www.bogus.test", "bogus", "6 DNSSEC Bogus “<img src=x onerror=alert(1)> RRSIG expired”"]]);
    expect(await page.locator("#result table.dnssec-table img").count()).toBe(0);
    expect(await page.locator("#result").innerText()).toContain("dns_dnssec_bogus");
  });
});
