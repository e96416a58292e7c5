import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { generateApiKey } from "../../src/access/api-key.js";
import type { AccessStore } from "../../src/access/store.js";
import { accessClient } from "../fixtures/access-router.js";
import { mistypedKey, newKey, sqliteStoreUnderTest, type StoreUnderTest } from "../fixtures/store-harness.js";

const config = { creditBudget: 300, creditWindowSeconds: 86_400 };
const USAGE_HEADERS = [
  "ratelimit-policy",
  "ratelimit",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-used",
  "x-ratelimit-reset",
];

describe("access interceptor", () => {
  let harness: StoreUnderTest;
  let store: AccessStore;

  afterEach(async () => {
    await harness.cleanup();
  });

  async function setUp() {
    harness = sqliteStoreUnderTest();
    store = await harness.open();
    return accessClient({ store, config });
  }

  it("answers 401 with one message for a missing, malformed, mistyped, unknown or revoked key, charging nothing", async () => {
    const { call } = await setUp();
    const revoked = await newKey(store, "revoked");
    await store.revokeKey(revoked.record.id);
    const good = await newKey(store, "good");
    const typo = mistypedKey(good.secret);
    const results = await Promise.all(
      [undefined, "", "nonsense", typo, generateApiKey().secret, revoked.secret].map((key) => call("checkSite", key)),
    );
    for (const { error, headers } of results) {
      expect(error?.code).toBe(Code.Unauthenticated);
      expect(error?.rawMessage).toBe("a valid API key is required in the x-api-key header or the api_key query parameter");
      expect(headers.get("x-ratelimit-remaining")).toBeNull();
    }
    expect((await store.usage(good.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(0);
    expect((await store.usage(revoked.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(0);
  });

  it("charges 2 for CheckSite and 5 for TraceRedirects and reports usage on every success", async () => {
    const { call } = await setUp();
    const key = await newKey(store);
    const before = Math.floor(Date.now() / 1_000);
    const first = await call("checkSite", key.secret);
    expect(first.error).toBeUndefined();
    const reset = Number(first.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThanOrEqual(before + 86_400);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1_000) + 86_400);
    expect(Object.fromEntries(USAGE_HEADERS.map((name) => [name, first.headers.get(name)]))).toEqual({
      "ratelimit-policy": '"credits";q=300;w=86400',
      ratelimit: '"credits";r=298;t=86400',
      "x-ratelimit-limit": "300",
      "x-ratelimit-remaining": "298",
      "x-ratelimit-used": "2",
      "x-ratelimit-reset": String(reset),
    });
    const second = await call("traceRedirects", key.secret);
    expect(second.headers.get("ratelimit")).toMatch(/^"credits";r=293;t=(86399|86400)$/);
    expect(second.headers.get("x-ratelimit-used")).toBe("7");
    expect(second.headers.get("x-ratelimit-reset")).toBe(String(reset)); // still the first charge that frees first
    expect(second.headers.get("retry-after")).toBeNull();
  });

  it("gives back the price of a call the service could not run, once, and its answer says what is left", async () => {
    const { call } = await setUp();
    const key = await newKey(store);
    expect((await call("checkSite", key.secret)).headers.get("x-ratelimit-used")).toBe("2");
    const overloaded = await call("checkSite", key.secret, "overloaded");
    expect(overloaded.error?.code).toBe(Code.Unavailable);
    expect(overloaded.headers.get("x-ratelimit-used")).toBe("2");
    // A handler that says so twice for its one diagnostic still gets back only what the call cost.
    const twice = await call("checkSite", key.secret, "overloaded-twice");
    expect(twice.headers.get("x-ratelimit-used")).toBe("2");
    expect((await store.usage(key.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(2);
  });

  it("gives back a batch's items the service could not run, once the stream is over", async () => {
    const { batch } = await setUp();
    const key = await newKey(store);
    await batch(key.secret, ["https://a.test/", "overloaded", "https://b.test/", "overloaded"]);
    // 4 items at 2 credits each, 2 of them given back.
    expect((await store.usage(key.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(4);
  });

  it("charges before validation: an invalid url still costs, and the 400 says what is left", async () => {
    const { call } = await setUp();
    const key = await newKey(store);
    const site = await call("checkSite", key.secret, "bad");
    expect(site.error?.code).toBe(Code.InvalidArgument);
    expect(site.headers.get("x-ratelimit-used")).toBe("2");
    const trace = await call("traceRedirects", key.secret, "bad");
    expect(trace.error?.code).toBe(Code.InvalidArgument);
    expect(trace.headers.get("x-ratelimit-remaining")).toBe("293");
  });

  it("admits 150 CheckSite calls; the 151st is 429 with Retry-After and a message saying when it fits", async () => {
    const { call } = await setUp();
    const key = await newKey(store);
    const startedAt = Date.now();
    for (let i = 1; i <= 150; i++) {
      const { error, headers } = await call("checkSite", key.secret);
      expect(error).toBeUndefined();
      expect(headers.get("x-ratelimit-remaining")).toBe(String(300 - 2 * i));
    }
    const refused = await call("checkSite", key.secret);
    // The first charge frees 86400 s after it was made: what is left of that
    // depends on how long the 150 calls took (seconds on a loaded machine).
    const elapsedS = Math.ceil((Date.now() - startedAt) / 1_000);
    const wait = expect.toSatisfy((text: string) => Number(text) >= 86_400 - elapsedS - 1 && Number(text) <= 86_400);
    expect(refused.error?.code).toBe(Code.ResourceExhausted);
    // The wait in hours and minutes and the UTC time it ends (no raw seconds); nothing else fits in 0 credits, so nothing more is said.
    expect(refused.error?.rawMessage).toMatch(
      /^this call costs 2 credits but 0 of 300 are left in the rolling 24 h window; it becomes affordable in (24 h|23 h \d\d? min) \(at \d{4}-\d\d-\d\d \d\d:\d\d UTC\)\.$/,
    );
    expect(refused.headers.get("retry-after")).toEqual(wait);
    expect(/^"credits";r=0;t=(\d+)$/.exec(refused.headers.get("ratelimit") ?? "")?.[1]).toEqual(wait);
    expect(refused.headers.get("ratelimit-policy")).toBe('"credits";q=300;w=86400');
    expect(refused.headers.get("x-ratelimit-used")).toBe("300");
    expect((await store.usage(key.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(300);
  });

  it("refuses a 5-credit call that no longer fits while a 2-credit call still passes", async () => {
    harness = sqliteStoreUnderTest();
    store = await harness.open();
    const { call } = accessClient({ store, config: { creditBudget: 7, creditWindowSeconds: 60 } });
    const key = await newKey(store);
    expect((await call("checkSite", key.secret)).error).toBeUndefined();
    const trace = await call("traceRedirects", key.secret);
    expect(trace.error).toBeUndefined();
    expect(trace.headers.get("ratelimit")).toMatch(/^"credits";r=0;t=60$/);
    const refused = await call("traceRedirects", key.secret);
    expect(refused.error?.code).toBe(Code.ResourceExhausted);
    expect(refused.headers.get("retry-after")).toBe("60"); // only when both charges age out
  });

  it("says what the credits left still pay for when a call no longer fits", async () => {
    harness = sqliteStoreUnderTest();
    store = await harness.open();
    const { call } = accessClient({ store, config: { creditBudget: 10, creditWindowSeconds: 60 } });
    const key = await newKey(store);
    expect((await call("checkSite", key.secret)).error).toBeUndefined();
    expect((await call("traceRedirects", key.secret)).error).toBeUndefined();
    const refused = await call("traceRedirects", key.secret);
    expect(refused.error?.code).toBe(Code.ResourceExhausted);
    expect(refused.error?.rawMessage).toMatch(
      /^this call costs 5 credits but 3 of 10 are left in the rolling 1 min window; it becomes affordable in (1 min|\d\d s) \(at (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC\)\. The 3 credits left still pay for a check\.$/,
    );
    expect(refused.headers.get("retry-after")).toMatch(/^(59|60)$/);
  });

  it("never says retry for a batch that costs more than the whole budget: no Retry-After, the usage headers, and how many items fit", async () => {
    harness = sqliteStoreUnderTest();
    store = await harness.open();
    const { batch } = accessClient({ store, config: { creditBudget: 100, creditWindowSeconds: 86_400 } });
    const key = await newKey(store);
    const refused = await batch(
      key.secret,
      Array.from({ length: 60 }, (_, i) => `https://site.test/${i}`),
    ).then(
      () => undefined,
      (error: unknown) => ConnectError.from(error),
    );
    expect(refused?.code).toBe(Code.ResourceExhausted);
    expect(refused?.rawMessage).toBe(
      "this call costs 120 credits, more than the whole budget of 100 in the rolling 24 h window, so no wait makes it affordable; " +
        "a batch of at most 50 of these items fits it. The 100 credits left still pay for 50 checks or 20 traces.",
    );
    expect(refused?.metadata.get("retry-after")).toBeNull();
    expect(refused?.metadata.get("x-ratelimit-remaining")).toBe("100");
    expect(refused?.metadata.get("ratelimit-policy")).toBe('"credits";q=100;w=86400');
    expect((await store.usage(key.record.id, { budget: 100, windowSeconds: 86_400 })).used).toBe(0);
  });

  it("answers 503 when the store cannot be reached, and never runs the call unmetered", async () => {
    const { call } = await setUp();
    const key = await newKey(store);
    await store.close();
    const result = await call("checkSite", key.secret);
    expect(result.error?.code).toBe(Code.Unavailable);
    expect(result.error?.rawMessage).toBe("the credit store is unreachable; try again shortly");
  });

  it("refuses to run a method that has no credit cost", async () => {
    harness = sqliteStoreUnderTest();
    store = await harness.open();
    const { call } = accessClient({ store, config, priceOf: () => undefined });
    const key = await newKey(store);
    expect((await call("checkSite", key.secret)).error?.code).toBe(Code.Internal);
    expect((await store.usage(key.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(0);
  });
});
