import { create } from "@bufbuild/protobuf";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CheckSitesRequestSchema, DiagnosticsService, TraceRedirectsBatchRequestSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { priceOf } from "../../src/access/call-price.js";
import { redisAvailability, startRedisServer, type RedisServerFixture } from "../../testkit/redis-server.js";
import { newKey, redisStoreUnderTest, sqliteStoreUnderTest, type StoreUnderTest } from "../fixtures/store-harness.js";

const redis = redisAvailability();
let redisServer: RedisServerFixture | undefined;
beforeAll(async () => {
  if (redis.available) redisServer = await startRedisServer();
});
afterAll(async () => {
  await redisServer?.close();
});

describe("the price of a batch", () => {
  it("is the unit cost per item, and no price at all outside 1 to 100 items", () => {
    const sites = (n: number) => create(CheckSitesRequestSchema, { urls: Array.from({ length: n }, () => "https://a.test/") });
    const traces = (n: number) =>
      create(TraceRedirectsBatchRequestSchema, { items: Array.from({ length: n }, () => ({ url: "https://a.test/" })) });
    expect(priceOf(DiagnosticsService.method.checkSites.name, sites(3))).toEqual({ kind: "credits", credits: 6, units: 3 });
    expect(priceOf(DiagnosticsService.method.traceRedirectsBatch.name, traces(100))).toEqual({ kind: "credits", credits: 500, units: 100 });
    expect(priceOf(DiagnosticsService.method.checkSites.name, sites(101))).toMatchObject({ kind: "unpriced" });
    expect(priceOf(DiagnosticsService.method.traceRedirectsBatch.name, traces(0))).toMatchObject({ kind: "unpriced" });
  });
});

const kinds = [
  { kind: "sqlite", skip: false, create: () => sqliteStoreUnderTest() },
  {
    kind: "redis",
    skip: !redis.available,
    create: () => {
      if (redisServer === undefined) throw new Error("the test Redis did not start");
      return redisStoreUnderTest(redisServer);
    },
  },
] as const;

describe.each(kinds)("batches racing one key on $kind", ({ skip, create: open }) => {
  let harness: StoreUnderTest | undefined;
  afterEach(async () => {
    await harness?.cleanup();
  });

  it.skipIf(skip)("admit exactly what the budget covers, each batch whole or not at all, across two instances", async () => {
    harness = open();
    const [one, two] = [await harness.open(), await harness.open()];
    const key = await newKey(one);
    const price = priceOf(
      DiagnosticsService.method.traceRedirectsBatch.name,
      create(TraceRedirectsBatchRequestSchema, { items: [{ url: "a" }, { url: "b" }, { url: "c" }] }),
    );
    if (price?.kind !== "credits") throw new Error("a 3-item batch has a price");
    // Twenty batches of 15 credits race for 100: six fit (90), the other fourteen are refused whole.
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? one : two).charge(key.digest, price.credits, { budget: 100, windowSeconds: 86_400 }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.kind === "admitted")).toHaveLength(6);
    expect((await one.usage(key.record.id, { budget: 100, windowSeconds: 86_400 })).used).toBe(90);
  });
});
