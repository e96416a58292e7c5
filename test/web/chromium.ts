import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, chromium } from "playwright-core";

/** Debian's Chromium (apt-get install chromium); no tool ever downloads a browser of its own. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Flags that keep Chromium's own traffic off the network: no background
 * updates, sync, component downloads or QUIC probes. With them, the only
 * requests are the ones the page makes, and those go to loopback.
 */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export type ChromiumAvailability = { readonly available: true } | { readonly available: false; readonly reason: string };

/**
 * Whether the browser tests can run. Where Chromium is missing they skip and
 * say so, except under CI (CI set), where a missing browser is a failure: CI
 * installs it and never quietly skips.
 */
export function chromiumAvailability(): ChromiumAvailability {
  if (existsSync(CHROMIUM)) return { available: true };
  const reason = `${CHROMIUM} is not installed (apt-get install chromium); the page's browser tests are skipped`;
  if (process.env.CI !== undefined && process.env.CI !== "") throw new Error(`${reason}, but CI is set and CI never skips`);
  console.warn(reason);
  return { available: false, reason };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/**
 * A browser context that may load from loopback only: any other request is
 * aborted before it leaves and recorded, so a test can assert there was none.
 */
export async function loopbackOnlyContext(browser: Browser, options: Parameters<Browser["newContext"]>[0] = {}): Promise<{ context: BrowserContext; foreign: string[] }> {
  const context = await browser.newContext(options);
  const foreign: string[] = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === "http:" || url.protocol === "https:") && (url.hostname === "127.0.0.1" || url.hostname === "[::1]")) return route.continue();
    if (url.protocol === "data:" || url.protocol === "blob:") return route.continue();
    foreign.push(url.href);
    return route.abort("blockedbyclient");
  });
  return { context, foreign };
}
