/**
 * The certificate chain on the page (details), in a real browser against
 * `sitediag serve` as its own process: the chain under the certificates
 * table, the failing link marked and named in words, key types and
 * signature algorithms, the expiry warning among a trace's warnings, and a
 * hostile certificate's names shown as text, escaped.
 *
 * SITEDIAG_UPDATE_SCREENSHOTS=1 writes docs/page-chain.png; otherwise it goes to a temp dir.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getChainPki } from "../fixtures/chain-certificates.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { oddCertificates } from "../fixtures/odd-certificates.js";
import { getTestPki } from "../fixtures/test-ca.js";
import { chromiumAvailability } from "../fixtures/chromium.js";
import { askOnPage, type PageRig, startPageRig } from "../fixtures/page-rig.js";

const chromium = chromiumAvailability();
const ROUTES = { "/": { kind: "respond", status: 200 } } as const;
const DOCS = join(import.meta.dirname, "..", "..", "docs");

describe.skipIf(!chromium.available)("the certificate chain on the page, in Chromium", () => {
  let expiredIntermediate: HttpTargets;
  let expiringSoon: HttpTargets;
  let hostile: HttpTargets;
  let rig: PageRig;
  let dir: string;

  beforeAll(async () => {
    const [pki, testPki] = await Promise.all([getChainPki(), getTestPki()]);
    const controlBytes = (await oddCertificates(7)).find((odd) => odd.kind === "control-bytes");
    if (controlBytes === undefined) throw new Error("no control-bytes case");
    expiredIntermediate = await startHttpTargets({ tls: pki.expiredIntermediate, routes: ROUTES });
    expiringSoon = await startHttpTargets({ tls: pki.expiresIn5Days, routes: ROUTES });
    hostile = await startHttpTargets({ tls: { key: controlBytes.key, cert: controlBytes.cert }, routes: ROUTES });
    const ports = [expiredIntermediate, expiringSoon, hostile].map((target) => target.httpsPort ?? 0).join(",");
    // The chain tests' root beside the test CA (which signs the odd certificates), in one file as an operator's bundle.
    dir = mkdtempSync(join(tmpdir(), "sitediag-page-chain-ca-"));
    writeFileSync(join(dir, "ca.pem"), testPki.caPem + pki.rootPem);
    rig = await startPageRig("page-chain", { SITEDIAG_TRACE_PORTS: ports, SITEDIAG_CA_FILE: join(dir, "ca.pem") });
  }, 120_000);

  afterAll(async () => {
    await rig?.close();
    await Promise.all([expiredIntermediate, expiringSoon, hostile].map((target) => target?.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => rig.settle());

  const ask = async (url: string, button: "Is it down?" | "Trace redirects"): Promise<Page> => {
    const page = await rig.open("/", { viewport: { width: 1280, height: 900 } });
    await askOnPage(page, url, button, rig.key, 20_000);
    return page;
  };

  it("opens the chain of a failed verification and names the failing link in words: the expired intermediate", async () => {
    const page = await ask(expiredIntermediate.url("/", { secure: true }), "Is it down?");
    const chain = page.locator("#result details.certificate-chain");
    expect(await chain.count()).toBe(1);
    expect(await chain.getAttribute("open")).not.toBeNull();
    expect(await chain.locator("summary").innerText()).toMatch(
      /^Chain shown to request 1 by 127\.0\.0\.1:\d+: 3 certificates, not trusted: expired at certificate 1$/,
    );
    const rows = await chain
      .locator("table.chain-table tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent ?? "")));
    expect(rows.map((row) => [row[0], row[1], row[3], row[4], row[6]])).toEqual([
      ["0", "localhost", "EC 256 (prime256v1)", "ecdsa-with-SHA256", "–"],
      ["1", "expired chain intermediate", "EC 256 (prime256v1)", "ecdsa-with-SHA256", "expired"],
      ["2", "sitediag chain root self-issued", "EC 256 (prime256v1)", "ecdsa-with-SHA256", "–"],
    ]);
    expect(rows[1]?.[5]).toMatch(/expired \d+ days ago/);
    expect(
      await page.evaluate("getComputedStyle(document.querySelector('#result table.chain-table tr:has(.chain-reason) td')).backgroundColor"),
    ).toBe("rgb(254, 242, 242)");
    await chain.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(process.env.SITEDIAG_UPDATE_SCREENSHOTS === "1" ? DOCS : dir, "page-chain.png"), fullPage: true });
  });

  it("keeps a verified chain collapsed, with its RSA intermediate, and the trace warns of the leaf's 5 days", async () => {
    const page = await ask(expiringSoon.url("/", { secure: true }), "Trace redirects");
    const chain = page.locator("#result details.certificate-chain").first();
    expect(await chain.getAttribute("open")).toBeNull();
    expect(await chain.locator("summary").innerText()).toMatch(/: 3 certificates, verified$/);
    await chain.locator("summary").click();
    const keys = await chain.locator("table.chain-table tbody tr").evaluateAll((trs) => trs.map((tr) => tr.children[3]?.textContent ?? ""));
    expect(keys).toEqual(["EC 256 (prime256v1)", "RSA 2048", "EC 256 (prime256v1)"]);
    expect(await page.locator("#result").innerText()).toMatch(
      /The certificate "localhost" of https:\/\/127\.0\.0\.1:\d+\/ expires in 5 days, on \d{4}-\d\d-\d\d/,
    );
  });

  it("shows a hostile certificate's names as text: control bytes and bidi overrides replaced, no markup made", async () => {
    const page = await ask(hostile.url("/", { secure: true }), "Is it down?");
    const chain = page.locator("#result details.certificate-chain").first();
    if ((await chain.getAttribute("open")) === null) await chain.locator("summary").click();
    const cell = chain.locator("table.chain-table tbody tr").first().locator("td").nth(1);
    const subject = (await cell.textContent()) ?? "";
    expect(subject).toContain("\ufffd");
    // eslint-disable-next-line no-control-regex
    expect(subject).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    expect(subject.length).toBeLessThanOrEqual(340);
    // Text only: the only elements in the cell are the page's own.
    expect(await cell.locator("*:not(span):not(small)").count()).toBe(0);
  });
});
