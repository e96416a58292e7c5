import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltPage, buildPage } from "../../scripts/build-page.js";
import { loadPageFiles, PAGE_CONTENT_SECURITY_POLICY, pageRoutes } from "../../src/server/ops/page.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";

describe("the page's static routes", () => {
  let dir: string;
  let built: BuiltPage;
  let service: TestService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-page-build-"));
    built = await buildPage(join(dir, "web"));
    service = await startTestService({ plainRoutes: pageRoutes(loadPageFiles(built.dir)) });
  });

  afterAll(async () => {
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves index.html at /, never cached, under a strict Content-Security-Policy", async () => {
    const response = await fetch(`${service.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("content-security-policy")).toBe(PAGE_CONTENT_SECURITY_POLICY);
    expect(PAGE_CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(PAGE_CONTENT_SECURITY_POLICY).not.toMatch(/unsafe|https?:|\*/);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await response.text();
    expect(html).toContain(`src="${built.assets.script}"`);
    expect(html).toContain(`href="${built.assets.style}"`);
  });

  it("names no other origin: every src and href of the page is a path on this one", async () => {
    const html = await (await fetch(`${service.url}/`)).text();
    const references = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    expect(references.length).toBeGreaterThanOrEqual(4);
    for (const reference of references) expect(reference).toMatch(/^\/(?!\/)/);
  });

  it("serves the hashed assets with long-lived caching and their types", async () => {
    const expected = {
      [built.assets.script]: "text/javascript; charset=utf-8",
      [built.assets.style]: "text/css; charset=utf-8",
      [built.assets.icon]: "image/svg+xml",
    };
    for (const [path, type] of Object.entries(expected)) {
      expect(path).toMatch(/^\/assets\/[a-z]+-[A-Za-z0-9]{8}\.(js|css|svg)$/);
      const response = await fetch(`${service.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(type);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  it("answers HEAD without a body, other methods 405, unknown files 404", async () => {
    const head = await fetch(`${service.url}/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(0);
    expect(await head.text()).toBe("");
    expect((await fetch(`${service.url}/`, { method: "POST" })).status).toBe(405);
    expect((await fetch(`${service.url}/assets/app-00000000.js`)).status).toBe(404);
    expect((await fetch(`${service.url}/index.html`)).status).toBe(404);
  });

  it("names its assets after their bytes: an unchanged source builds the same names", async () => {
    const again = await buildPage(join(dir, "again"));
    expect(again.assets).toEqual(built.assets);
  });
});
