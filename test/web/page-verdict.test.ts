/**
 * How the page words one check's or trace's verdict, in Chromium against
 * `sitediag serve` as its own process and loopback targets that answer as a
 * proxy does (the heads of test/fixtures/proxy-answers.ts): a challenge is a
 * third, amber state; a proxy's 502 is worded as the DOWN it is; a problem
 * warning does not sit under a green banner. Set up as page.test.ts is.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-challenge.png.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { CLOUDFLARE_BAD_GATEWAY, CLOUDFLARE_CHALLENGE } from "../fixtures/proxy-answers.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");

describe.skipIf(!chromium.available)("the page's verdicts, in Chromium", () => {
  let dir: string;
  let targets: HttpTargets;
  let key: string;
  let rig: PageRig;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;

  beforeAll(async () => {
    const pki = await getTestPki();
    targets = await startHttpTargets({ tls: pki.valid });
    targets.route("/up", { kind: "respond", status: 200, body: "fine" });
    targets.route("/challenge", CLOUDFLARE_CHALLENGE);
    targets.route("/cf-502", CLOUDFLARE_BAD_GATEWAY);
    // An HTTPS page that sends its visitors to plain HTTP.
    targets.route("/downgrade", { kind: "redirect", status: 301, location: targets.url("/up") });
    targets.route("/temporary", { kind: "redirect", status: 302, location: "/up" });
    rig = await startPageRig("page-verdict", {
      SITEDIAG_TRACE_PORTS: `${targets.httpPort},${targets.httpsPort ?? 0}`,
    });
    ({ dir, key } = rig);
  });

  afterAll(async () => {
    await rig?.close();
    await targets?.close();
  });

  afterEach(() => rig.settle());

  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects") => askOnPage(page, url, button, key);

  it("shows a Cloudflare challenge as the amber third state, not a green UP", async () => {
    const page = await rig.open();
    await ask(page, targets.url("/challenge", { secure: true }), "Is it down?");
    const verdict = page.locator("#result .verdict");
    expect(await verdict.getAttribute("class")).toBe("verdict gated");
    expect(await page.locator("#result .verdict-word").textContent()).toBe("CHALLENGED");
    expect(await page.locator("#status").textContent()).toBe("Result: challenged");
    expect(await verdict.locator(".reason").textContent()).toBe(
      "Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't",
    );
    // Amber (page.css --warn-bg), not the green of UP nor the red of DOWN.
    expect(await page.evaluate("getComputedStyle(document.querySelector('#result .verdict')).backgroundColor")).toBe("rgb(255, 244, 206)");
    const facts = await page.locator("#result .facts").innerText();
    expect(facts).toContain("403 Forbidden");
    expect(facts).not.toMatch(/cloudflare \(/);
    await page.screenshot({ path: join(screenshots ?? dir, "page-challenge.png"), fullPage: true });
  });

  it("words a Cloudflare 502 as the origin's failure under DOWN, never 'cloudflare (unknown)'", async () => {
    const page = await rig.open();
    await ask(page, targets.url("/cf-502", { secure: true }), "Is it down?");
    expect(await page.locator("#result .verdict").getAttribute("class")).toBe("verdict down");
    expect(await page.locator("#result .verdict-word").textContent()).toBe("DOWN");
    const facts = await page.locator("#result .facts").innerText();
    expect(facts).toContain("Cloudflare answered 502: it could not reach the origin server, or got no valid answer from it");
    expect(facts).not.toMatch(/unknown|challenge|not an outage/);
  });

  it("shows an https -> http downgrade as a problem: no green banner, the problem named in it, the warning marked problem", async () => {
    const page = await rig.open();
    await ask(page, targets.url("/downgrade", { secure: true }), "Trace redirects");
    const verdict = page.locator("#result .verdict");
    expect(await verdict.locator(".chain-status").textContent()).toBe("Redirects detected");
    expect(await verdict.getAttribute("class")).toBe("verdict down");
    expect(await verdict.locator(".reason").textContent()).toBe(
      `1 problem: Hop 1 redirects from HTTPS to plain HTTP: ${targets.url("/up")}`,
    );
    const downgrade = page.locator("#result .warnings li", { hasText: "https_downgrade" });
    expect(await downgrade.getAttribute("class")).toBe("severity-problem");
    expect(await downgrade.locator(".badge").textContent()).toBe("problem");
  });

  it("keeps a chain whose warnings are only warnings or info under a good banner, each marked with its severity", async () => {
    const page = await rig.open();
    await ask(page, targets.url("/temporary", { secure: true }), "Trace redirects");
    expect(await page.locator("#result .verdict").getAttribute("class")).toBe("verdict up");
    expect(await page.locator("#result .verdict .reason").count()).toBe(0);
    expect(await page.locator("#result .warnings li.severity-warning .badge").textContent()).toBe("warning");
  });
});
