/**
 * "From every region" on the page, in a real browser, against one of three
 * `sitediag serve` processes that are three vantages on one Redis, each with
 * its own DNS server: the name resolves in two of them and not in the third,
 * and another name leads one vantage to a challenge. The page asks the one
 * instance; its answer comes from all three over the engine.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-vantages.png; otherwise it goes to a temp dir.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { redisAvailability } from "../../testkit/redis-server.js";
import { startThreeVantages, type ThreeVantages } from "../fixtures/three-vantages.js";
import { eventually } from "../fixtures/vantage-rig.js";
import { chromiumAvailability, launchChromium, loopbackOnlyContext } from "../fixtures/chromium.js";
import { askOnPage } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const redisHere = redisAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");
const PLACES: Readonly<Record<string, { readonly label: string; readonly location: string }>> = {
  "ap-south": { label: "AP South", location: "Mumbai, IN" },
  "eu-west": { label: "EU West", location: "Frankfurt, DE" },
  "us-east": { label: "US East", location: "Ashburn, US" },
};

describe.skipIf(!chromium.available || !redisHere.available)("the page from three regions on one Redis, in Chromium", () => {
  let targets: HttpTargets;
  let rig: ThreeVantages;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let foreign: string[] = [];
  let broken: string[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-page-vantages-regions-"));
    targets = await startHttpTargets({
      routes: {
        "/a": { kind: "redirect", status: 301, location: "/b" },
        "/b": { kind: "respond", status: 200, body: "landed" },
      },
    });
    rig = await startThreeVantages(targets.httpPort, (name) => ({
      SITEDIAG_VANTAGE_LABEL: PLACES[name]?.label ?? name,
      SITEDIAG_VANTAGE_LOCATION: PLACES[name]?.location ?? "",
    }));
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await rig?.close();
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await context?.close();
    context = undefined;
    expect(foreign).toEqual([]);
    expect(broken).toEqual([]);
  });

  async function open(): Promise<Page> {
    ({ context, foreign } = await loopbackOnlyContext(browser, { viewport: { width: 1100, height: 900 } }));
    const page = await context.newPage();
    broken = [];
    page.on("pageerror", (error) => broken.push(error.message));
    await page.goto(`${rig.asker.url}/`);
    return page;
  }

  async function fromEverywhere(page: Page, url: string, button: "Is it down?" | "Trace redirects"): Promise<void> {
    await page.getByLabel("From every region").check();
    await askOnPage(page, url, button, rig.key.secret);
  }

  it("a name that resolves in two regions: down in some regions on top, three rows, each region's word, status and reason", async () => {
    const page = await open();
    await fromEverywhere(page, targets.url("/a", { hostname: "site.test" }), "Is it down?");
    await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Down in some regions");
    expect(await page.locator("#result .vantages > .verdict").getAttribute("data-verdict")).toBe("down_in_some");
    expect(await page.locator("#result .vantages > .verdict .reason").innerText()).toBe(
      `${targets.url("/a", { hostname: "site.test" })}: 3 of 3 regions answered`,
    );
    const rows = page.locator("#result details.vantage");
    expect(await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute("data-vantage")))).toEqual([
      "ap-south",
      "eu-west",
      "us-east",
    ]);
    const south = page.locator('#result details.vantage[data-vantage="ap-south"]');
    expect(await south.locator(".vantage-word").innerText()).toBe("DOWN");
    expect(await south.locator(".vantage-name").innerText()).toBe("AP South Mumbai, IN");
    expect(await south.locator(".vantage-reason").innerText()).toContain("DNS lookup failed: no such host");
    expect(await south.locator(".vantage-code").innerText()).toBe("dns_no_such_host");
    // Above the rows, what differs between the regions, as the service computed it.
    const differs = await page.locator("#result .vantages > .differences").innerText();
    expect(differs).toMatch(/^What differs: addresses: ap-south NXDOMAIN; eu-west, us-east 127\.0\.0\.1 · resolver: /);
    expect(differs).toContain("failed stage: ap-south dns; eu-west, us-east none");
    for (const name of ["eu-west", "us-east"]) {
      const row = page.locator(`#result details.vantage[data-vantage="${name}"]`);
      expect(await row.locator(".vantage-word").innerText()).toBe("UP");
      expect(await row.locator(".vantage-status").innerText()).toBe("200");
      expect(await row.locator(".vantage-time").innerText()).toMatch(/^\d+ ms$/);
    }
    // A row opens to that region's own answer: its chain and waterfall.
    const west = page.locator('#result details.vantage[data-vantage="eu-west"]');
    await west.locator(":scope > summary").click();
    expect(await west.locator(".vantage-body article.check .verdict-word").innerText()).toBe("UP");
    expect(await west.locator(".vantage-body svg.waterfall").count()).toBeGreaterThan(0);
    expect(await page.locator("#status").innerText()).toBe("Result: down in some regions");
    await page.screenshot({
      path: join(process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : dir, "page-vantages.png"),
      fullPage: true,
    });
  });

  it("a challenge in one region: blocked in some regions, that row CHALLENGED at 403 with the provider's sentence", async () => {
    const page = await open();
    await fromEverywhere(page, targets.url("/b", { hostname: "gate.test" }), "Is it down?");
    await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Blocked in some regions");
    const east = page.locator('#result details.vantage[data-vantage="us-east"]');
    expect(await east.locator(".vantage-status").innerText()).toBe("403");
    expect(await east.locator(".vantage-word").innerText()).toBe("CHALLENGED");
    expect(await east.locator(".vantage-reason").innerText()).toBe(
      "Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't",
    );
    expect(await page.locator('#result details.vantage[data-vantage="ap-south"] .vantage-word').innerText()).toBe("UP");
  });

  it("a frozen region (SIGSTOP): amber 'Up where answered', naming the region not seen from, its row unavailable with when it was last seen", async () => {
    const south = rig.serves.get("ap-south");
    const admin = new Redis(rig.redis.url());
    try {
      south?.child.kill("SIGSTOP");
      // Asked only once its heartbeat has expired (5 s): `all` then answers it unavailable at once.
      await eventually(async () => {
        const scores = (await admin.zrange("{sitediag:vantages}:seen", 0, -1, "WITHSCORES")).filter(
          (_, index, all) => index % 2 === 1 && (all[index - 1] ?? "").startsWith('["ap-south"'),
        );
        return scores.length > 0 && scores.every((score) => Number(score) < Date.now() - 5_500) ? true : undefined;
      }, 30_000);
      const page = await open();
      await fromEverywhere(page, targets.url("/b"), "Is it down?");
      await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Up where answered");
      const verdict = page.locator("#result .vantages > .verdict");
      expect(await verdict.getAttribute("class")).toBe("verdict gated");
      expect(await verdict.locator(".reason").innerText()).toBe(`${targets.url("/b")}: 2 of 3 regions answered`);
      expect(await verdict.locator(".silent").innerText()).toBe("Not seen from: AP South (no answer)");
      const row = page.locator('#result details.vantage[data-vantage="ap-south"]');
      expect(await row.locator(".vantage-word").innerText()).toBe("UNAVAILABLE");
      expect(await row.locator(".vantage-reason").innerText()).toMatch(/^No instance of this vantage has been seen since \d{4}-/);
    } finally {
      south?.child.kill("SIGCONT");
      admin.disconnect();
    }
  }, 90_000);

  it("a trace from three regions: each row's chain status, the hops inside", async () => {
    const page = await open();
    await fromEverywhere(page, targets.url("/a", { hostname: "site.test" }), "Trace redirects");
    await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Down in some regions");
    const west = page.locator('#result details.vantage[data-vantage="eu-west"]');
    expect(await west.locator(".vantage-status").innerText()).toBe("Redirects detected, 200");
    expect(await page.locator('#result details.vantage[data-vantage="ap-south"] .vantage-word').innerText()).toBe("DOWN");
    await west.locator(":scope > summary").click();
    expect(await west.locator(".vantage-body table.hops tbody tr").count()).toBe(2);
  });
});
