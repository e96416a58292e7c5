/**
 * The stapled OCSP answer on the page, in a real browser against `sitediag
 * serve` as its own process (page-rig.ts): a row per host and reading under
 * "Revocation (stapled OCSP)", the note that no responder is asked, and
 * redirect-check's certificate_revoked among the warnings.
 *
 * SITEDIAG_OCSP_SCREENSHOT=<dir> writes revocation.png there to look at.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getOcspFixture, type OcspFixture, startStaplingTarget, type StaplingTarget } from "../fixtures/ocsp-staples.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();

describe.skipIf(!chromium.available)("the page's revocation section, in Chromium", () => {
  let fixture: OcspFixture;
  let revoked: StaplingTarget;
  let none: StaplingTarget;
  let other: StaplingTarget;
  let rig: PageRig;

  beforeAll(async () => {
    fixture = await getOcspFixture();
    revoked = await startStaplingTarget(fixture.revoked, fixture.answers.revoked);
    none = await startStaplingTarget(fixture.good, null);
    other = await startStaplingTarget(fixture.good, fixture.answers.revoked);
    const ports = [revoked, none, other].map((site) => new URL(site.url).port);
    rig = await startPageRig("page-revocation", { SITEDIAG_TRACE_PORTS: ports.join(",") });
  });

  afterAll(async () => {
    await rig?.close();
    await Promise.all([revoked, none, other].map((site) => site?.close()));
  });

  afterEach(() => rig.settle());

  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects") => askOnPage(page, url, button, rig.key, 20_000);

  async function revocationRows(page: Page): Promise<string[][]> {
    return page
      .locator("#result table.revocation-table tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => (td.textContent ?? "").replace(/\s+/g, " ").trim())));
  }

  it("a trace to a revoked certificate: one row for its requests, revoked with its reason, verified; certificate_revoked among the warnings", async () => {
    const page = await rig.open("/", { viewport: { width: 1280, height: 900 } });
    await ask(page, `${revoked.url}redirect`, "Trace redirects");
    const rows = await revocationRows(page);
    expect(rows).toHaveLength(1);
    const [requests, host, status, leaf, signature, updated] = rows[0] ?? [];
    // Two hops and the extra GET of the final page, all over the connection that stapled.
    expect(requests).toBe("1, 2, 3");
    expect(host).toBe(new URL(revoked.url).host);
    expect(status).toMatch(/^revoked \d{4}-\d\d-\d\d \d\d:\d\d \(keyCompromise\)$/);
    expect([leaf, signature]).toEqual(["this certificate", "verified"]);
    expect(updated).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d ?next \d{4}-\d\d-\d\d \d\d:\d\d$/);
    expect(await page.locator("#result table.revocation-table .badge.bad").count()).toBe(1);
    expect(await page.locator("#result section.revocation .note").innerText()).toBe(
      "Read from the handshake only: sitediag never asks an OCSP responder or a CRL address itself.",
    );
    expect(await page.locator("#result").innerText()).toContain("certificate_revoked");
    const shots = process.env.SITEDIAG_OCSP_SCREENSHOT;
    if (shots !== undefined) await page.locator("#result").screenshot({ path: join(shots, "revocation.png") });
  });

  it("a check: nothing stapled reads so; an answer for another certificate says whose", async () => {
    const page = await rig.open();
    await ask(page, none.url, "Is it down?");
    expect(await revocationRows(page)).toEqual([["1", new URL(none.url).host, "nothing stapled", "–", "–", "–"]]);
    await ask(page, other.url, "Is it down?");
    const rows = await revocationRows(page);
    expect(rows.map((row) => row.slice(2, 4))).toEqual([[expect.stringMatching(/^revoked /) as string, "another certificate"]]);
    expect(fixture.responder.contacts()).toBe(0);
  });
});
