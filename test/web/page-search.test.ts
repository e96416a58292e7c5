/**
 * What the final page tells search engines, and "Request as" (issue 39), on
 * the page in Chromium against `sitediag serve` as its own process
 * (page-rig.ts): the Search engines part and its warning listed once, a
 * clean page raising none, a site that redirects Googlebot seen through the
 * select (and the curl line naming it), and the Batch tab's rows as Googlebot.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, type ReceivedRequest, type TargetRoute, startHttpTargets } from "../fixtures/http-targets.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();

const page = (head: string): TargetRoute => ({
  kind: "respond",
  status: 200,
  headers: { "content-type": "text/html" },
  body: `<html><head>${head}</head><body><h1>Widgets</h1></body></html>`,
});

describe.skipIf(!chromium.available)("search signals and Request as, in Chromium", () => {
  let targets: HttpTargets;
  let rig: PageRig;

  beforeAll(async () => {
    targets = await startHttpTargets({
      routes: {
        "/old": { kind: "redirect", status: 301, location: "/noindex" },
        "/noindex": page('<title>New</title><meta name="robots" content="noindex">'),
        "/clean": page("<title>Widgets</title>"),
        "/by-agent": (request: ReceivedRequest) =>
          String(request.headers["user-agent"] ?? "").includes("Googlebot")
            ? { kind: "redirect", status: 301, location: "/for-bots" }
            : page("<title>People</title>"),
        "/for-bots": page("<title>Bots</title>"),
      },
    });
    rig = await startPageRig("page-search", { SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8", SITEDIAG_TRACE_PORTS: String(targets.httpPort) });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await targets?.close();
  });

  afterEach(() => rig.settle());

  const open = () => rig.open("/", { viewport: { width: 1280, height: 900 } });
  const searchRows = (page: Page) => page.locator("#result section.search-signals tbody tr").allInnerTexts();
  const warningItems = (page: Page) => page.locator("#result section.warnings-section ul.warnings li").allInnerTexts();

  it("a trace ending on a noindex page: the Search engines part says so, and its warning is listed once", async () => {
    const page = await open();
    await askOnPage(page, targets.url("/old"), "Trace redirects", rig.key, 20_000);
    expect(await searchRows(page)).toEqual([
      'Indexing\tnoindex: not indexed (<meta name="robots">)',
      "Canonical URL\tnone named",
      "Redirected to a home page\tno",
      "Reads as not found\tno",
    ]);
    expect(await warningItems(page)).toEqual([
      expect.stringMatching(
        /^warning noindex .+ asks search engines not to index it: noindex in a <meta name="robots"> element \(hop 2\)$/,
      ),
    ]);
    expect((await page.locator("#result").innerText()).split("asks search engines not to index it").length - 1).toBe(1);
  });

  it("a clean page: indexable, no warnings", async () => {
    const page = await open();
    await askOnPage(page, targets.url("/clean"), "Is it down?", rig.key, 20_000);
    expect((await searchRows(page))[0]).toBe("Indexing\tindexable (no noindex)");
    expect(await page.locator("#result section.warnings-section").innerText()).toContain("No warnings.");
  });

  it("Request as Googlebot: the site's redirect for Googlebot is traced, and the curl line names it", async () => {
    const page = await open();
    await page.getByLabel("Request as").selectOption("googlebot");
    await askOnPage(page, targets.url("/by-agent"), "Trace redirects", rig.key, 20_000);
    expect(await page.locator("#result table.hops tbody tr").count()).toBe(2);
    expect(await page.locator("#result").innerText()).toContain(targets.url("/for-bots"));
    expect(await page.locator("#curl-text").innerText()).toContain("user_agent=googlebot");
  });

  it("the Batch tab requests every row as Googlebot; the noindex row fails", async () => {
    const page = await open();
    await page.getByRole("tab", { name: "Batch" }).click();
    await page.getByLabel("API key").fill(rig.key);
    await page.getByLabel("Request every row as").selectOption("googlebot");
    await page.getByLabel("URLs, one per line").fill([targets.url("/old"), targets.url("/clean"), targets.url("/by-agent")].join("\n"));
    await page.getByRole("button", { name: "Trace all" }).click();
    await page.getByRole("status").getByText("Done: 3 of 3, 1 failed.").waitFor({ timeout: 20_000 });
    const rows = page.locator("#batch-rows tr:not(.batch-detail)");
    expect((await rows.nth(0).locator("td").allInnerTexts()).slice(1, 2)).toEqual(["FAIL"]);
    expect((await rows.nth(0).locator("td").allInnerTexts())[6]).toMatch(/noindex$/);
    expect((await rows.nth(2).locator("td").allInnerTexts()).slice(1, 5)).toEqual([
      "PASS",
      targets.url("/by-agent"),
      "200",
      targets.url("/for-bots"),
    ]);
  });
});
