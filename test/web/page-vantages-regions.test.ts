/**
 * "From every region" on the page, in a real browser, against one of three
 * `sitediag serve` processes that are three vantages on one Redis, each with
 * its own DNS server: the name resolves in two of them and not in the third,
 * and another name leads one vantage to a challenge. The page asks the one
 * instance; its answer comes from all three over the engine.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-vantages.png and docs/page-vantages-waiting.png (a
 * region still out); otherwise they go to a temp dir.
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

interface Snapshot {
  readonly west: string | null;
  readonly east: string | null;
  readonly south: string | null;
  readonly southReason: string | null;
  readonly verdictClass: string | null;
  readonly verdict: string | null;
  readonly word: string | null;
  readonly waitingFor: string | null;
  readonly busy: string | null;
}

/** Evaluated in the page (a string: this file is type-checked without the DOM's types). */
const SNAPSHOT = `(() => {
  const text = (selector) => document.querySelector(selector)?.textContent ?? null;
  const row = (name, part) => text('#result details.vantage[data-vantage="' + name + '"] ' + part);
  const verdict = document.querySelector("#result .vantages > .verdict");
  return {
    west: row("eu-west", ".vantage-word"),
    east: row("us-east", ".vantage-word"),
    south: row("ap-south", ".vantage-word"),
    southReason: row("ap-south", ".vantage-reason"),
    verdictClass: verdict?.getAttribute("class") ?? null,
    verdict: verdict?.getAttribute("data-verdict") ?? null,
    word: text("#result .vantages > .verdict .verdict-word"),
    waitingFor: text("#result .vantages > .verdict .waiting-for"),
    busy: document.querySelector("#result")?.getAttribute("aria-busy") ?? null,
  };
})()`;

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
      // A deadline of 5 x 3 s + 2 s (vantage-run.ts) rather than 32 s: a frozen region is waited for that long.
      SITEDIAG_SITE_TIMEOUT_MS: "3000",
    }));
    // frozen.test: the targets in eu-west and us-east; ap-south's resolver never answers, so its job is in hand when it is frozen.
    for (const [name, server] of rig.dns) server.answer("frozen.test", name === "ap-south" ? "never" : { a: ["127.0.0.1"] });
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
      const before = await creditsLeft();
      await fromEverywhere(page, targets.url("/b"), "Is it down?");
      await expect.poll(() => page.locator("#result .vantages > .verdict .verdict-word").innerText()).toBe("Up where answered");
      // Charged for the two live regions only (a region known silent is free): the credits line says what the store says after.
      const after = await creditsLeft();
      expect(after.remaining).toBe(before.remaining - 4);
      expect(await page.locator("#credits").innerText()).toMatch(new RegExp(`^Credits left: ${after.remaining} of ${after.limit}(;|$)`));
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

  /**
   * Asks from every region for frozen.test and freezes ap-south (SIGSTOP) once
   * its resolver has the question: its job is in hand and nobody else will
   * answer it, so its row waits until the deadline. `during` runs while
   * ap-south is frozen, with the page and when the button was pressed.
   */
  async function withFrozenSouth(during: (page: Page, pressedAt: number) => Promise<void>): Promise<void> {
    const south = rig.serves.get("ap-south");
    const resolver = rig.dns.get("ap-south");
    const asked = () => (resolver?.queries ?? []).filter((query) => query.name === "frozen.test").length;
    const page = await open();
    await page.getByLabel("From every region").check();
    await page.getByLabel("API key").fill(rig.key.secret);
    await page.getByLabel("URL or domain").fill(targets.url("/b", { hostname: "frozen.test" }));
    const before = asked();
    const pressedAt = Date.now();
    await page.getByRole("button", { name: "Is it down?" }).click();
    try {
      await eventually(() => Promise.resolve(asked() > before ? true : undefined));
      south?.child.kill("SIGSTOP");
      await during(page, pressedAt);
    } finally {
      south?.child.kill("SIGCONT");
      // Live again (a beat within the last 2 s) before the next test asks `all`.
      const admin = new Redis(rig.redis.url());
      await eventually(async () => {
        const scores = (await admin.zrange("{sitediag:vantages}:seen", 0, -1, "WITHSCORES")).filter(
          (_, index, all) => index % 2 === 1 && (all[index - 1] ?? "").startsWith('["ap-south"'),
        );
        return scores.some((score) => Number(score) > Date.now() - 2_000) ? true : undefined;
      });
      admin.disconnect();
    }
  }

  /** What the key has left as the service's store says, from GET /api/v1/credits (which costs nothing). */
  async function creditsLeft(): Promise<{ readonly remaining: number; readonly limit: number }> {
    const response = await fetch(`${rig.asker.url}/api/v1/credits`, { headers: { "x-api-key": rig.key.secret } });
    const body = (await response.json()) as { data: { remaining: number; limit: number } };
    return body.data;
  }

  /** The live regions' rows, the verdict and ap-south's row, read in one look so they belong to the same moment. */
  async function snapshot(page: Page): Promise<Snapshot> {
    return (await page.evaluate(SNAPSHOT)) as Snapshot;
  }

  it("a region frozen mid-check: the two live rows appear while it waits and the verdict is provisional, well before its deadline; then the service's amber verdict", async () => {
    const before = await creditsLeft();
    await withFrozenSouth(async (page, pressedAt) => {
      await expect.poll(async () => Object.values(await snapshot(page)).slice(0, 2)).toEqual(["UP", "UP"]);
      // While it runs, the credits line is the stream's head: 2 charged for each of the three regions asked.
      expect(await page.locator("#credits").innerText()).toMatch(
        new RegExp(`^Credits left: ${before.remaining - 6} of ${before.limit}(;|$)`),
      );
      const rowsAt = Date.now();
      const during = await snapshot(page);
      expect(during).toMatchObject({
        south: "WAITING",
        verdict: "up_where_answered",
        word: "Up where answered so far",
        verdictClass: "verdict gated provisional",
        busy: "true",
      });
      expect(during.waitingFor).toMatch(/^Waiting for: AP South \(\d+ s of \d+ s\)$/);
      expect(during.southReason).toMatch(/^Waiting \d+ s of \d+ s; unavailable if not in by then$/);
      expect(await page.locator("#result .vantages > .verdict .reason").innerText()).toBe(
        `${targets.url("/b", { hostname: "frozen.test" })}: 2 of 3 regions answered so far`,
      );
      // The deadline as the service announced it; the waited seconds tick towards it.
      const deadlineMs = Number(/of (\d+) s/.exec(during.waitingFor ?? "")?.[1]) * 1000;
      expect(deadlineMs).toBeGreaterThan(0);
      await expect.poll(async () => (await snapshot(page)).waitingFor).not.toBe(during.waitingFor);
      await page.screenshot({
        path: join(process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : dir, "page-vantages-waiting.png"),
        fullPage: true,
      });
      // The service's verdict, at the deadline: drawn as the unary answer is, amber, the frozen region unavailable.
      await expect.poll(async () => (await snapshot(page)).verdictClass, { timeout: deadlineMs + 30_000 }).toBe("verdict gated");
      const finalAt = Date.now();
      const after = await snapshot(page);
      expect(after).toMatchObject({
        west: "UP",
        east: "UP",
        south: "UNAVAILABLE",
        verdict: "up_where_answered",
        word: "Up where answered",
      });
      expect(after.southReason).toMatch(/^This vantage did not answer by the deadline/);
      expect(await page.locator("#result .vantages > .verdict .silent").innerText()).toBe("Not seen from: AP South (no answer)");
      expect(await page.locator("#status").innerText()).toBe("Result: up where answered");
      // At its end, the trailers': ap-south, unavailable at the deadline, was refunded before the stream's end was written.
      const left = await creditsLeft();
      expect(left.remaining).toBe(before.remaining - 4);
      expect(await page.locator("#credits").innerText()).toMatch(new RegExp(`^Credits left: ${left.remaining} of ${left.limit}(;|$)`));
      // Measured, not assumed: the rows were in before the deadline had run, and the last word came only with it.
      expect(finalAt - pressedAt).toBeGreaterThanOrEqual(deadlineMs - 1_000);
      expect(finalAt - rowsAt).toBeGreaterThan(deadlineMs / 2);
    });
  }, 120_000);

  it("Cancel while a frozen region is waited for: the rows in stay, the region still out is cancelled, the page is free at once", async () => {
    await withFrozenSouth(async (page) => {
      await expect.poll(async () => Object.values(await snapshot(page)).slice(0, 3)).toEqual(["UP", "UP", "WAITING"]);
      await page.getByRole("button", { name: "Cancel" }).click();
      await page.locator('#result[aria-busy="false"]').waitFor({ state: "attached" });
      const after = await snapshot(page);
      expect(after).toMatchObject({ west: "UP", east: "UP", south: "CANCELLED", verdict: "cancelled", word: "Cancelled" });
      expect(await page.locator("#result .vantages > .verdict .reason").innerText()).toMatch(/: 2 of 3 regions answered before Cancel$/);
      expect(await page.locator("#status").innerText()).toMatch(/^Cancelled after \d+\.\d s: /);
      // Stopped for good: no waiting clock is left to tick, and the buttons ask again.
      expect(await page.locator("#result .waited").count()).toBe(0);
      expect(await page.getByRole("button", { name: "Is it down?" }).isEnabled()).toBe(true);
    });
  }, 60_000);

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
