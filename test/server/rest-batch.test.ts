import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

/** The REST batch door: POST with a JSON body, answered as NDJSON flushed item by item, in the documented envelope. */
let targets: HttpTargets;
let service: ServeTestService;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/fast": { kind: "respond", status: 200 },
      "/slow": { kind: "respond", status: 200, delayMs: 1_500 },
      "/old": { kind: "redirect", status: 301, location: "/fast" },
    },
  });
  service = await startTestService({ as: "serve", config: { siteTimeoutMs: 3_000, tracePorts: [targets.httpPort] } });
}, 30_000);

afterAll(async () => {
  await service?.close();
  await targets?.close();
});

const policy = () => ({ budget: service.config.creditBudget, windowSeconds: service.config.creditWindowSeconds });

function post(path: string, body: string, headers: Record<string, string> = { "x-api-key": service.key }) {
  return fetch(`${service.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
}

/** Reads NDJSON lines as they arrive, noting when each came. */
async function lines(response: Response): Promise<{ line: Record<string, unknown>; atMs: number }[]> {
  const started = performance.now();
  const out: { line: Record<string, unknown>; atMs: number }[] = [];
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = pending.indexOf("\n")) >= 0) {
      out.push({ line: JSON.parse(pending.slice(0, end)) as Record<string, unknown>, atMs: performance.now() - started });
      pending = pending.slice(end + 1);
    }
  }
  expect(pending).toBe("");
  return out;
}

describe("POST /api/v1/batch/is-site-down", () => {
  it("streams one envelope per URL as each completes, with the usage headers on the head", async () => {
    const before = (await service.store.usage(service.keyId, policy())).used;
    const urls = [targets.url("/slow"), targets.url("/fast"), "ftp://nope/"];
    const response = await post("/api/v1/batch/is-site-down", JSON.stringify({ urls }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(response.headers.get("x-ratelimit-used")).toBe(String(before + 6));
    const got = await lines(response);
    expect(got.map(({ line }) => line.index).sort()).toEqual([0, 1, 2]);
    const byIndex = new Map(got.map((entry) => [entry.line.index, entry]));
    expect(byIndex.get(1)?.line).toMatchObject({
      ok: true,
      data: { requestedUrl: urls[1], status: "up", statusCode: 200 },
      meta: { tool: "is-site-down", version: "v1" },
      url: urls[1],
    });
    expect(byIndex.get(2)?.line).toMatchObject({
      ok: false,
      error: { code: "invalid_argument" },
      meta: { tool: "is-site-down" },
      url: "ftp://nope/",
    });
    expect(byIndex.get(0)?.line).toMatchObject({ ok: true, data: { status: "up" } });
    // Flushed as completed: the fast item's line arrived well before the slow one's.
    expect((byIndex.get(0)?.atMs ?? 0) - (byIndex.get(1)?.atMs ?? 0)).toBeGreaterThan(500);
  });

  it("answers a plain JSON error, charging nothing, for a batch that cannot run", async () => {
    const before = (await service.store.usage(service.keyId, policy())).used;
    const cases = [
      {
        body: JSON.stringify({ urls: Array.from({ length: 101 }, () => targets.url("/fast")) }),
        status: 400,
        code: "invalid_argument",
        message: /at most 100 items/,
      },
      { body: JSON.stringify({ urls: [] }), status: 400, code: "invalid_argument", message: /at least one item/ },
      { body: "{not json", status: 400, code: "invalid_argument", message: /not JSON/ },
      {
        body: JSON.stringify({ url: targets.url("/fast") }),
        status: 400,
        code: "invalid_argument",
        message: /does not fit CheckSitesRequest/,
      },
      { body: JSON.stringify({ urls: ["x".repeat(70_000)] }), status: 413, code: "resource_exhausted", message: /larger than 65536 bytes/ },
    ];
    for (const { body, status, code, message } of cases) {
      const response = await post("/api/v1/batch/is-site-down", body);
      expect(response.status, body.slice(0, 40)).toBe(status);
      const envelope = (await response.json()) as { ok: boolean; error: { code: string; message: string }; meta: { tool: string } };
      expect(envelope).toMatchObject({ ok: false, error: { code }, meta: { tool: "is-site-down" } });
      expect(envelope.error.message).toMatch(message);
    }
    expect((await service.store.usage(service.keyId, policy())).used).toBe(before);
  });

  it("refuses a missing key before reading the body, and a GET with 405", async () => {
    const anonymous = await post("/api/v1/batch/is-site-down", JSON.stringify({ urls: [targets.url("/fast")] }), {});
    expect(anonymous.status).toBe(401);
    const get = await fetch(`${service.url}/api/v1/batch/is-site-down`, { headers: { "x-api-key": service.key } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
  });
});

describe("POST /api/v1/batch/redirect-check", () => {
  it("streams each trace with its expectation", async () => {
    const items = [
      { url: targets.url("/old"), expectedFinalUrl: targets.url("/fast") },
      { url: targets.url("/old"), expectedFinalUrl: targets.url("/elsewhere") },
      { url: targets.url("/fast") },
    ];
    const response = await post("/api/v1/batch/redirect-check", JSON.stringify({ items }));
    expect(response.status).toBe(200);
    const byIndex = new Map((await lines(response)).map(({ line }) => [line.index, line]));
    expect(byIndex.get(0)).toMatchObject({
      ok: true,
      data: { chainStatus: "Redirects detected" },
      expectation: { matches: true, reason: null },
      meta: { tool: "redirect-check" },
    });
    expect(byIndex.get(1)).toMatchObject({ expectation: { matches: false } });
    expect(byIndex.get(2)).toMatchObject({ ok: true, expectation: null });
    // Without max_redirects, no line says a limit: the answer stays as it was.
    for (const line of byIndex.values()) expect(line).not.toHaveProperty("maxRedirects");
  });

  it("holds every item to the batch's max_redirects unless it sets its own, and names a refused URL by its input_* code", async () => {
    const items = [
      { url: targets.url("/old") },
      { url: targets.url("/old"), maxRedirects: 1 },
      { url: `http://10.0.0.1:${targets.httpPort}/x` },
      { url: "ht!tp://bad url" },
    ];
    const response = await post("/api/v1/batch/redirect-check", JSON.stringify({ items, maxRedirects: 0 }));
    expect(response.status).toBe(200);
    const byIndex = new Map((await lines(response)).map(({ line }) => [line.index, line]));
    expect(byIndex.get(0)).toMatchObject({ ok: true, data: { redirects: 1 }, maxRedirects: 0 });
    expect(byIndex.get(1)).toMatchObject({ ok: true, data: { redirects: 1 }, maxRedirects: 1 });
    expect(byIndex.get(2)).toMatchObject({ ok: false, error: { code: "invalid_argument", refusalCode: "input_non_public_address" } });
    expect(byIndex.get(3)).toMatchObject({ ok: false, error: { code: "invalid_argument", refusalCode: "input_invalid_url" } });
  });

  it("refuses a max_redirects outside 0 to 20, for the batch and for an item", async () => {
    const whole = await post("/api/v1/batch/redirect-check", JSON.stringify({ items: [{ url: targets.url("/old") }], maxRedirects: 21 }));
    expect(whole.status).toBe(400);
    expect(await whole.json()).toMatchObject({
      ok: false,
      error: { code: "invalid_argument", message: "max_redirects must be a whole number from 0 to 20, not 21" },
    });
    const item = await post("/api/v1/batch/redirect-check", JSON.stringify({ items: [{ url: targets.url("/old"), maxRedirects: -1 }] }));
    const [line] = await lines(item);
    expect(line?.line).toMatchObject({
      ok: false,
      error: { code: "invalid_argument", message: "the item's max_redirects must be a whole number from 0 to 20, not -1" },
    });
  });
});
