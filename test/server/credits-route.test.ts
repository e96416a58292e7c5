import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

/** GET /api/v1/credits: what a key has left, read for nothing, so a batch can be weighed before it is sent (issue 39). */
let targets: HttpTargets;
let service: ServeTestService;

beforeAll(async () => {
  targets = await startHttpTargets({ routes: { "/fast": { kind: "respond", status: 200 } } });
  service = await startTestService({ as: "serve", config: { tracePorts: [targets.httpPort] } });
}, 30_000);

afterAll(async () => {
  await service?.close();
  await targets?.close();
});

const policy = () => ({ budget: service.config.creditBudget, windowSeconds: service.config.creditWindowSeconds });
const credits = (headers: Record<string, string> = { "x-api-key": service.key }, method = "GET") =>
  fetch(`${service.url}/api/v1/credits`, { method, headers });

describe("GET /api/v1/credits", () => {
  it("says what the key has left in the usage headers and as data, and charges nothing however often it is read", async () => {
    const before = await service.store.usage(service.keyId, policy());
    for (let read = 0; read < 3; read++) {
      const response = await credits();
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("x-ratelimit-remaining")).toBe(String(before.remaining));
      expect(response.headers.get("x-ratelimit-limit")).toBe(String(service.config.creditBudget));
      expect(await response.json()).toEqual({
        ok: true,
        data: {
          remaining: before.remaining,
          limit: service.config.creditBudget,
          used: before.used,
          windowSeconds: service.config.creditWindowSeconds,
          resetAt: expect.any(Number),
        },
        meta: { tool: "credits", version: "v1" },
      });
    }
    expect((await service.store.usage(service.keyId, policy())).used).toBe(before.used);

    // A charged call shows at once, and a key's own budget is its limit.
    const trace = await fetch(`${service.url}/api/v1/redirect-check?url=${encodeURIComponent(targets.url("/fast"))}`, {
      headers: { "x-api-key": service.key },
    });
    expect(trace.status).toBe(200);
    await trace.arrayBuffer();
    await service.store.setKeyBudget(service.keyId, 120);
    const after = await credits();
    expect(await after.json()).toMatchObject({ data: { remaining: 120 - before.used - 5, limit: 120, used: before.used + 5 } });
    await service.store.setKeyBudget(service.keyId, null);
  });

  it("refuses a missing, malformed or unknown key with the one 401 of every door, and a key in the query string is not read", async () => {
    const unknown = `sd_${"A".repeat(22)}`;
    for (const headers of [{}, { "x-api-key": "nonsense" }, { "x-api-key": unknown }] as Record<string, string>[]) {
      const response = await credits(headers);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        ok: false,
        error: { code: "unauthenticated", message: "a valid API key is required in the x-api-key header or the api_key query parameter" },
        meta: { tool: "credits", version: "v1" },
      });
      expect(response.headers.get("x-ratelimit-remaining")).toBeNull();
    }
    const inQuery = await fetch(`${service.url}/api/v1/credits?api_key=${service.key}`);
    expect(inQuery.status).toBe(401);
    await inQuery.arrayBuffer();
  });

  it("answers another method with 405", async () => {
    const response = await credits({ "x-api-key": service.key }, "POST");
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET");
    await response.arrayBuffer();
  });
});
