/**
 * A check's evidence warnings (details.warnings) on the page, in a real
 * browser against `sitediag serve` as its own process (page-rig.ts): each
 * listed once under Warnings with its severity, code, message and request, a
 * problem on an up check named in a red banner, and the both-IP-families
 * part summarising its warning instead of repeating it (a trace's too).
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-check-warnings.png; otherwise it goes to the rig's temp dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getChainPki } from "../fixtures/chain-certificates.js";
import { type FamilyTargets, startFamilyTargets } from "../fixtures/family-targets.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { getOcspFixture, startStaplingTarget, type StaplingTarget } from "../fixtures/ocsp-staples.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");

describe.skipIf(!chromium.available)("the page's check warnings, in Chromium", () => {
  let revoked: StaplingTarget;
  let expiringSoon: HttpTargets;
  let disagree: FamilyTargets;
  let alike: FamilyTargets;
  let rig: PageRig;
  let dir: string;

  beforeAll(async () => {
    const [pki, chain, ocsp] = await Promise.all([getTestPki(), getChainPki(), getOcspFixture()]);
    revoked = await startStaplingTarget(ocsp.revoked, ocsp.answers.revoked);
    expiringSoon = await startHttpTargets({ tls: chain.expiresIn5Days, routes: { "/": { kind: "respond", status: 200 } } });
    disagree = await startFamilyTargets({ 4: { status: 503 }, 6: { status: 200 } });
    alike = await startFamilyTargets({ 4: { status: 200 }, 6: { status: 200 } });
    dir = mkdtempSync(join(tmpdir(), "sitediag-page-check-warnings-"));
    // The OCSP leaves hang off the test CA, the 5-day leaf off the chain root: trust both.
    writeFileSync(join(dir, "ca.pem"), `${pki.caPem}\n${chain.rootPem}\n`);
    writeFileSync(join(dir, "hosts"), "127.0.0.1 dual.test\n::1 dual.test\n");
    rig = await startPageRig("page-check-warnings", {
      SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
      SITEDIAG_CA_FILE: join(dir, "ca.pem"),
      SITEDIAG_HOSTS_FILE: join(dir, "hosts"),
      SITEDIAG_TRACE_PORTS: `${disagree.port},${alike.port}`,
    });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await Promise.all([revoked?.close(), expiringSoon?.close(), disagree?.close(), alike?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => rig.settle());

  const open = () => rig.open("/", { viewport: { width: 1280, height: 900 } });
  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects") => askOnPage(page, url, button, rig.key, 20_000);
  const warningItems = (page: Page) => page.locator("#result section.warnings-section ul.warnings li").allInnerTexts();
  const timesSeen = async (page: Page, text: string) => (await page.locator("#result").innerText()).split(text).length - 1;

  it("a check to a revoked certificate: UP under a red banner naming the problem, certificate_revoked listed once on request 1", async () => {
    const page = await open();
    await ask(page, revoked.url, "Is it down?");
    const verdict = page.locator("#result .verdict");
    expect(await verdict.locator(".verdict-word").innerText()).toBe("UP");
    expect(await verdict.getAttribute("class")).toBe("verdict down");
    expect(await page.locator("#status").textContent()).toBe("Result: up, 1 problem");
    expect(await verdict.locator(".reason").innerText()).toMatch(
      /^1 problem: The certificate of https:\/\/127\.0\.0\.1:\d+\/ is revoked since 2026-01-01/,
    );
    expect(await warningItems(page)).toEqual([
      expect.stringMatching(
        /^problem certificate_revoked The certificate of https:\/\/127\.0\.0\.1:\d+\/ is revoked since 2026-01-01.* \(request 1\)$/,
      ),
    ]);
    expect(await page.locator("#result ul.warnings li.severity-problem .badge.bad").count()).toBe(1);
    expect(await timesSeen(page, "certificate_revoked")).toBe(1);
    // From the banner to the end of the warnings, what a person reads first (below the fold: clip the whole page, not the viewport).
    const top = await verdict.boundingBox();
    const bottom = await page.locator("#result section.warnings-section").boundingBox();
    if (top === null || bottom === null) throw new Error("the verdict or the warnings were not drawn");
    const clip = { x: top.x, y: top.y, width: top.width, height: bottom.y + bottom.height - top.y };
    await page.screenshot({
      path: join(process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : rig.dir, "page-check-warnings.png"),
      clip,
      fullPage: true,
    });
  });

  it("a check to a certificate with 5 days left: the banner stays green, certificate_expires_soon as a warning on request 1", async () => {
    const page = await open();
    await ask(page, expiringSoon.url("/", { secure: true }), "Is it down?");
    expect(await page.locator("#result .verdict").getAttribute("class")).toBe("verdict up");
    expect(await page.locator("#result .verdict .reason").count()).toBe(0);
    expect(await warningItems(page)).toEqual([
      expect.stringMatching(
        /^warning certificate_expires_soon The certificate "localhost" of https:\/\/127\.0\.0\.1:\d+\/ expires in 5 days.* \(request 1\)$/,
      ),
    ]);
    expect(await page.locator("#result ul.warnings li.severity-warning .badge.warn").count()).toBe(1);
  });

  it("a check whose families disagree: families_disagree once, under Warnings; the families part says so without repeating it", async () => {
    const page = await open();
    await ask(page, disagree.url("/", "dual.test"), "Is it down?");
    expect(await page.locator("#result .verdict").getAttribute("class")).toBe("verdict up");
    expect(await warningItems(page)).toEqual([
      expect.stringMatching(
        /^warning families_disagree GET http:\/\/dual\.test:\d+\/ answers 200 over IPv6 \(::1\) but 503 over IPv4 \(127\.0\.0\.1\) \(request 1\)$/,
      ),
    ]);
    expect(await timesSeen(page, "families_disagree")).toBe(1);
    expect(await page.locator("#result section.families .note").innerText()).toBe(
      "They did not answer alike: its warning is listed under Warnings, above.",
    );
  });

  it("a trace: a family warning once, in the trace's warnings on hop 1; families that agree keep their note", async () => {
    const page = await open();
    await ask(page, disagree.url("/", "dual.test"), "Trace redirects");
    expect(await warningItems(page)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^warning families_disagree HEAD http:\/\/dual\.test:\d+\/ answers 200 .* \(hop 1\)$/),
      ]),
    );
    expect(await timesSeen(page, "families_disagree")).toBe(1);
    await ask(page, alike.url("/", "dual.test"), "Trace redirects");
    expect(await page.locator("#result section.families .note").innerText()).toBe("Both families answered alike.");
    expect(await page.locator("#result section.warnings-section").innerText()).not.toMatch(/families_disagree|unreachable/);
  });
});
