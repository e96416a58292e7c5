/**
 * "From every region" on the page, in a real browser against `sitediag
 * serve` as its own process on its embedded store: one vantage, `local`.
 * The verdict over the vantages on top, one row per vantage (its verdict,
 * status, time and reason) that opens to the answer from there, drawn as a
 * single answer is, and the curl line that asks the same.
 *
 * Its screenshot goes to the rig's temp dir: docs/page-vantages.png is
 * page-vantages-regions.test.ts's, three regions on one Redis.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { CLOUDFLARE_CHALLENGE } from "../fixtures/proxy-answers.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();

describe.skipIf(!chromium.available)("the page from every region, in Chromium", () => {
  let targets: HttpTargets;
  let rig: PageRig;

  beforeAll(async () => {
    targets = await startHttpTargets({
      routes: {
        "/a": { kind: "redirect", status: 301, location: "/b" },
        "/b": { kind: "respond", status: 200, body: "landed" },
        "/broken": { kind: "respond", status: 503 },
        "/challenge": CLOUDFLARE_CHALLENGE,
      },
    });
    rig = await startPageRig("page-vantages", { SITEDIAG_TRACE_PORTS: String(targets.httpPort) });
  });

  afterAll(async () => {
    await rig?.close();
    await targets?.close();
  });

  afterEach(() => rig.settle());

  async function fromEverywhere(page: Page, url: string, button: "Is it down?" | "Trace redirects"): Promise<void> {
    await page.getByLabel("From every region").check();
    await askOnPage(page, url, button, rig.key);
  }

  it("an up site: the verdict on top, one row for local with its status and time, opening to its chain and waterfall", async () => {
    const page = await rig.open();
    await fromEverywhere(page, targets.url("/a"), "Is it down?");
    await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Up everywhere");
    expect(await page.locator("#result .vantages > .verdict").getAttribute("data-verdict")).toBe("up_everywhere");
    expect(await page.locator("#result .vantages > .verdict .reason").innerText()).toBe(`${targets.url("/a")}: 1 of 1 region answered`);
    const row = page.locator('#result details.vantage[data-vantage="local"]');
    expect(await row.locator(".vantage-word").innerText()).toBe("UP");
    expect(await row.locator(".vantage-name").innerText()).toBe("local");
    expect(await row.locator(".vantage-status").innerText()).toBe("200");
    expect(await row.locator(".vantage-time").innerText()).toMatch(/^\d+ ms$/);
    // Closed until asked; opened, the single answer as the page draws it: its verdict, its requests and their waterfall.
    expect(await row.locator(".vantage-body").isVisible()).toBe(false);
    await row.locator(":scope > summary").click();
    expect(await row.locator(".vantage-body article.check .verdict-word").innerText()).toBe("UP");
    expect(await row.locator(".vantage-body svg.waterfall").count()).toBeGreaterThan(0);
    expect(await page.locator("#status").innerText()).toBe("Result: up everywhere");
    expect(await page.locator("#curl-text").innerText()).toContain("vantages=all");
    await page.screenshot({ path: join(rig.dir, "page-vantages.png"), fullPage: true });
  });

  it("a down site is down everywhere, its row saying why", async () => {
    const page = await rig.open();
    await fromEverywhere(page, targets.url("/broken"), "Is it down?");
    await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Down everywhere");
    const row = page.locator('#result details.vantage[data-vantage="local"]');
    expect(await row.locator(".vantage-word").innerText()).toBe("DOWN");
    expect(await row.locator(".vantage-status").innerText()).toBe("503");
    expect(await row.locator(".vantage-reason").innerText()).toContain("Server returned 503 Service Unavailable");
    expect(await row.locator(".vantage-code").innerText()).toBe("http_server_error");
  });

  it("a proxy's challenge: the row says CHALLENGED with the provider's sentence, as a single check does", async () => {
    const page = await rig.open();
    await fromEverywhere(page, targets.url("/challenge"), "Is it down?");
    const row = page.locator('#result details.vantage[data-vantage="local"]');
    await expect.poll(() => row.locator(".vantage-word").innerText()).toBe("CHALLENGED");
    expect(await row.locator(".vantage-reason").innerText()).toBe(
      "Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't",
    );
  });

  it("a trace from every region: the chain status and final status in the row, the hops inside", async () => {
    const page = await rig.open();
    await fromEverywhere(page, targets.url("/a"), "Trace redirects");
    await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Up everywhere");
    const row = page.locator('#result details.vantage[data-vantage="local"]');
    expect(await row.locator(".vantage-status").innerText()).toBe("Redirects detected, 200");
    await row.locator(":scope > summary").click();
    expect(await row.locator(".vantage-body table.hops tbody tr").count()).toBe(2);
  });

  it("unticked, the page asks as before: a single answer, no regions", async () => {
    const page = await rig.open();
    await askOnPage(page, targets.url("/b"), "Is it down?", rig.key);
    expect(await page.locator("#result article.check .verdict-word").innerText()).toBe("UP");
    expect(await page.locator("#result .vantages").count()).toBe(0);
    expect(await page.locator("#curl-text").innerText()).not.toContain("vantages");
  });
});
