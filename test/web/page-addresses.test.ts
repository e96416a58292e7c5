/**
 * The "Every address" and "TLS versions" parts of the page's details, in a
 * real browser against `sitediag serve` as its own process: a hosts file
 * names multi.test on 127.0.0.1, 127.0.0.3 and 127.0.0.4 (servers on .1 and
 * .4, nothing on .3), and an HTTPS server accepts TLS 1.2 only.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-addresses.png; otherwise it goes to a temp dir.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const DOCS = join(import.meta.dirname, "..", "..", "docs");

describe.skipIf(!chromium.available)("the page's every address and TLS versions, in Chromium", () => {
  const servers: Server[] = [];
  let port: number;
  let tlsPort: number;
  let rig: PageRig;
  let hostsDir: string;
  const screenshots = process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : undefined;

  async function listen(server: Server, host: string, at: number): Promise<number> {
    servers.push(server);
    server.listen(at, host);
    await once(server, "listening");
    return (server.address() as AddressInfo).port;
  }

  beforeAll(async () => {
    const pki = await getTestPki();
    const answer = (_request: unknown, response: { end: (body: string) => void }) => response.end("ok");
    port = await listen(createServer(answer), "127.0.0.1", 0);
    await listen(createServer(answer), "127.0.0.4", port);
    tlsPort = await listen(
      createTlsServer({ key: pki.valid.key, cert: pki.valid.cert, minVersion: "TLSv1.2", maxVersion: "TLSv1.2" }, answer),
      "127.0.0.1",
      0,
    );
    hostsDir = mkdtempSync(join(tmpdir(), "sitediag-page-addresses-"));
    writeFileSync(join(hostsDir, "hosts"), "127.0.0.1 multi.test localhost\n127.0.0.3 multi.test\n127.0.0.4 multi.test\n");
    rig = await startPageRig("page-addresses", {
      SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
      SITEDIAG_TRACE_PORTS: `${port},${tlsPort}`,
      SITEDIAG_HOSTS_FILE: join(hostsDir, "hosts"),
    });
  });

  afterAll(async () => {
    await rig?.close();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    rmSync(hostsDir, { recursive: true, force: true });
  });

  afterEach(() => rig.settle());

  const open = () => rig.open("/", { viewport: { width: 1280, height: 900 } });
  const ask = (page: Page, url: string, button: "Is it down?" | "Trace redirects") => askOnPage(page, url, button, rig.key, 20_000);

  async function rowsOf(page: Page, selector: string): Promise<string[][]> {
    return page
      .locator(`#result table.${selector} tbody tr`)
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => (td.textContent ?? "").replace(/\s+/g, " ").trim())));
  }

  it("a check: a row per address, 127.0.0.3 failed, and address_unreachable under Warnings; the verdict stays UP", async () => {
    const page = await open();
    await ask(page, `http://multi.test:${String(port)}/`, "Is it down?");
    expect(await page.locator("#result").innerText()).toMatch(/\bUP\b/);
    await expect.poll(() => page.locator("#result section.addresses h3").innerText()).toBe("Every address");
    const rows = await rowsOf(page, "addresses-table");
    expect(rows.map((row) => row.slice(0, 3))).toEqual([
      ["127.0.0.1", "IPv4", "200"],
      ["127.0.0.3", "IPv4", "failed at connect: connect_refused"],
      ["127.0.0.4", "IPv4", "200"],
    ]);
    expect(rows[0]?.[7]).toBe("the diagnostic's own request");
    const warnings = await page.locator("#result section.warnings-section ul.warnings li").allInnerTexts();
    expect(warnings).toEqual([expect.stringMatching(/^warning address_unreachable .*127\.0\.0\.3.* \(request 1\)$/)]);
    expect(await page.locator("#result section.addresses .note").innerText()).toMatch(/^Not every address answered alike/);
    await page.locator("#result section.addresses").screenshot({ path: join(screenshots ?? rig.dir, "page-addresses.png") });
  });

  it("a check of an https site: a row per TLS version, tls13_not_supported as info", async () => {
    const page = await open();
    await ask(page, `https://localhost:${String(tlsPort)}/`, "Is it down?");
    await expect.poll(() => page.locator("#result section.tls-versions h3").innerText()).toBe("TLS versions at 127.0.0.1");
    const rows = await rowsOf(page, "tls-versions-table");
    expect(rows.map((row) => row.slice(0, 2))).toEqual([
      ["TLS 1.3", "refused"],
      ["TLS 1.2", "accepted"],
      ["TLS 1.1", "refused"],
      ["TLS 1.0", "refused"],
    ]);
    expect(rows[1]?.[3]).toBe("http/1.1");
    const warnings = await page.locator("#result section.warnings-section ul.warnings li").allInnerTexts();
    expect(warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^info tls13_not_supported /)]));
    expect(await page.locator("#result section.addresses").count()).toBe(0);
    await page.locator("#result section.tls-versions").screenshot({ path: join(screenshots ?? rig.dir, "page-tls-versions.png") });
  });
});
