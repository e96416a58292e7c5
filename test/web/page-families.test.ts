/**
 * The "Both IP families" part of the page's details, in a real browser
 * against `sitediag serve` as its own process: a hosts file names dual.test
 * on 127.0.0.1 and ::1, and each family has its own server on one port.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-families.png; otherwise it goes to a temp dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FamilyTargets, startFamilyTargets } from "../fixtures/family-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");

describe.skipIf(!chromium.available)("the page's both IP families, in Chromium", () => {
  let disagree: FamilyTargets;
  let noIpv4: FamilyTargets;
  let rig: PageRig;
  let hostsDir: string;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;

  beforeAll(async () => {
    const pki = await getTestPki();
    // Another certificate over IPv4, and a 503: both disagreements at once.
    disagree = await startFamilyTargets({
      4: { status: 503, tls: { key: pki.viaIntermediate.key, cert: pki.viaIntermediate.cert + pki.intermediatePem } },
      6: { status: 200, tls: pki.valid },
    });
    noIpv4 = await startFamilyTargets({ 4: "closed", 6: { status: 200 } });
    hostsDir = mkdtempSync(join(tmpdir(), "sitediag-page-families-"));
    writeFileSync(join(hostsDir, "hosts"), "127.0.0.1 localhost v4only.test\n::1 localhost\n");
    rig = await startPageRig("page-families", {
      SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
      SITEDIAG_TRACE_PORTS: `${disagree.port},${noIpv4.port}`,
      SITEDIAG_HOSTS_FILE: join(hostsDir, "hosts"),
    });
  });

  afterAll(async () => {
    await rig?.close();
    await Promise.all([disagree?.close(), noIpv4?.close()]);
    rmSync(hostsDir, { recursive: true, force: true });
  });

  afterEach(() => rig.settle());

  const open = () => rig.open("/", { viewport: { width: 1280, height: 900 } });
  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects") => askOnPage(page, url, button, rig.key, 20_000);

  async function familyRows(page: Page): Promise<string[][]> {
    return page
      .locator("#result table.families-table tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => (td.textContent ?? "").replace(/\s+/g, " ").trim())));
  }

  it("a check: the picked family's request and the other's, their answers and certificates, and families_disagree; the verdict stays UP", async () => {
    const page = await open();
    await ask(page, disagree.url("/", "localhost"), "Is it down?");
    expect(await page.locator("#result").innerText()).toMatch(/\bUP\b/);
    await expect.poll(() => page.locator("#result section.families h3").innerText()).toBe("Both IP families");
    const rows = await familyRows(page);
    expect(rows.map((row) => row.slice(0, 3))).toEqual([
      ["IPv6", "::1", "200"],
      ["IPv4", "127.0.0.1", "503"],
    ]);
    const prints = rows.map((row) => row[4] ?? "");
    for (const print of prints) expect(print).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/);
    expect(prints[0]).not.toBe(prints[1]);
    // Listed once, under Warnings; the families part says they did not answer alike.
    const warnings = await page.locator("#result section.warnings-section ul.warnings li").allInnerTexts();
    expect(warnings).toEqual([expect.stringMatching(/^warning families_disagree .*another over IPv4.* \(request 1\)$/)]);
    expect(await page.locator("#result section.families .note").innerText()).toMatch(/^They did not answer alike/);
    await page.locator("#result section.families").screenshot({ path: join(screenshots ?? rig.dir, "page-families.png") });
  });

  it("a trace: the other family refused, with its failure, and ipv4_unreachable", async () => {
    const page = await open();
    await ask(page, noIpv4.url("/", "localhost"), "Trace redirects");
    const rows = await familyRows(page);
    expect(rows[0]?.slice(0, 3)).toEqual(["IPv6", "::1", "200"]);
    expect(rows[1]?.slice(0, 3)).toEqual(["IPv4", "127.0.0.1", "failed at connect: connect_refused"]);
    const warnings = await page.locator("#result section.warnings-section ul.warnings li").allInnerTexts();
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\w+ ipv4_unreachable HEAD .* failed over IPv4 \(127\.0\.0\.1\): Connection refused \(hop 1\)$/),
      ]),
    );
  });

  it("a name with one family: no such part", async () => {
    const page = await open();
    await ask(page, noIpv4.url("/", "v4only.test"), "Is it down?");
    expect(await page.locator("#result").innerText()).toMatch(/\bDOWN\b/);
    expect(await page.locator("#result section.families").count()).toBe(0);
  });
});
