import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { closedLoopbackPort } from "../fixtures/http-targets.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { type ServeProcess, startServeProcess } from "../load/service-process.js";
import { launchChromium, loopbackOnlyContext } from "./chromium.js";

/**
 * What every browser test file stands on: `sitediag serve` as its own
 * process, as `npm start` runs it (the page it serves is built once for the
 * run: test/fixtures/build-once.ts), on a SQLite store in a temp dir, trusting the test
 * CA, sending every name to a closed loopback port (the targets are IP
 * literals; a name never leaves the machine); its first key; and Chromium,
 * whose pages may reach loopback only.
 */
export interface PageRig {
  /** The temp dir of the service's store (keys.db) and the CA file; removed by close(). */
  readonly dir: string;
  readonly service: ServeProcess;
  /** The first key, printed by `serve` on its empty store. */
  readonly key: string;
  /**
   * A page on `path` of the service in a fresh context (1100 x 900 unless
   * `options` says otherwise) that may load from loopback only; its script
   * errors and Content-Security-Policy violations are collected for settle().
   */
  open(path?: string, options?: Parameters<Browser["newContext"]>[0]): Promise<Page>;
  /** After each test: closes the page's context, and checks it reached nothing beyond loopback and broke no script or policy. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function startPageRig(name: string, env: Readonly<Record<string, string>>): Promise<PageRig> {
  const dir = mkdtempSync(join(tmpdir(), `sitediag-${name}-`));
  writeFileSync(join(dir, "ca.pem"), (await getTestPki()).caPem);
  const service = await startServeProcess(
    Object.assign(
      {
        SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}`,
        SITEDIAG_CA_FILE: join(dir, "ca.pem"),
        SITEDIAG_DNS_SERVERS: `127.0.0.1:${await closedLoopbackPort()}`,
      },
      env,
    ),
    true,
  );
  if (service.firstKey === undefined) throw new Error("serve printed no first key");
  const browser = await launchChromium();
  let context: BrowserContext | undefined;
  let foreign: string[] = [];
  let broken: string[] = [];
  return {
    dir,
    service,
    key: service.firstKey,
    open: async (path = "/", options = {}) => {
      ({ context, foreign } = await loopbackOnlyContext(browser, Object.assign({ viewport: { width: 1100, height: 900 } }, options)));
      const page = await context.newPage();
      broken = [];
      page.on("pageerror", (error) => broken.push(error.message));
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) broken.push(message.text());
      });
      await page.goto(`${service.url}${path}`);
      return page;
    },
    settle: async () => {
      await context?.close();
      context = undefined;
      expect(foreign).toEqual([]);
      expect(broken).toEqual([]);
    },
    close: async () => {
      await browser.close();
      service.child.kill("SIGTERM");
      await service.exited();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the key (when given) and the URL, presses the button, and waits until the answer is drawn. */
export async function askOnPage(page: Page, url: string, button: "Is it down?" | "Trace redirects", key?: string, timeoutMs?: number): Promise<void> {
  if (key !== undefined) await page.getByLabel("API key").fill(key);
  await page.getByLabel("URL or domain").fill(url);
  await page.getByRole("button", { name: button }).click();
  await page.locator('#result[aria-busy="false"]').waitFor(timeoutMs === undefined ? { state: "attached" } : { state: "attached", timeout: timeoutMs });
}
