import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { DiagnosticsService } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { createAccessInterceptor } from "../../src/access/access-interceptor.js";
import type { AccessStore } from "../../src/access/store.js";
import { USAGE_HEADER_NAMES } from "../../src/access/usage-headers.js";
import { startHttpTargets, type HttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";
import { mistypedKey, newKey, sqliteStoreUnderTest, type StoreUnderTest } from "../fixtures/store-harness.js";

const UNAUTHENTICATED = "a valid API key is required in the x-api-key header or the api_key query parameter";

describe("keys and credits over HTTP, on every door", () => {
  let harness: StoreUnderTest;
  let store: AccessStore;
  let targets: HttpTargets;
  let service: TestService;

  afterEach(async () => {
    await service?.close();
    await targets?.close();
    await harness?.cleanup();
  });

  async function start(creditBudget = 300, creditWindowSeconds = 86_400) {
    harness = sqliteStoreUnderTest();
    store = await harness.open();
    targets = await startHttpTargets({ routes: { "/": { kind: "respond", status: 200 } } });
    service = await startTestService({
      config: { creditBudget, creditWindowSeconds, tracePorts: [targets.httpPort] },
      interceptors: [createAccessInterceptor({ store, config: { creditBudget, creditWindowSeconds } })],
      exposeHeaders: USAGE_HEADER_NAMES,
    });
  }

  function rest(path: string, query: Record<string, string>, headers: Record<string, string> = {}) {
    return fetch(`${service.url}${path}?${new URLSearchParams(query).toString()}`, { headers });
  }

  function connect(method: "CheckSite" | "TraceRedirects", body: object, headers: Record<string, string> = {}) {
    return fetch(`${service.url}/sitediag.v1.DiagnosticsService/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  }

  async function grpcCheckSite(url: string, key: string | undefined) {
    const client = createClient(DiagnosticsService, createGrpcTransport({ baseUrl: service.url }));
    let header = new Headers();
    try {
      await client.checkSite({ url }, { headers: key === undefined ? {} : { "x-api-key": key }, onHeader: (h) => (header = h) });
      return { header, error: undefined };
    } catch (error) {
      const connectError = ConnectError.from(error);
      return { header: connectError.metadata, error: connectError };
    }
  }

  it("answers 401 with one body on every door for a missing, malformed, unknown or revoked key, charging nothing", async () => {
    await start();
    const good = await newKey(store, "good");
    const revoked = await newKey(store, "revoked");
    await store.revokeKey(revoked.record.id);
    const url = targets.url("/");
    const bodies = new Set<string>();
    for (const key of [undefined, "sd_nope", mistypedKey(good.secret), revoked.secret]) {
      const byHeader = await rest("/api/v1/is-site-down", { url }, key === undefined ? {} : { "x-api-key": key });
      const byQuery = await rest("/api/v1/redirect-check", key === undefined ? { url } : { url, api_key: key });
      for (const response of [byHeader, byQuery]) {
        expect(response.status).toBe(401);
        expect(response.headers.get("x-ratelimit-remaining")).toBeNull();
        const body = (await response.json()) as { ok: boolean; error: { code: string; message: string } };
        expect(body).toMatchObject({ ok: false, error: { code: "unauthenticated", message: UNAUTHENTICATED } });
        bodies.add(JSON.stringify(body.error));
      }
      const rpc = await connect("CheckSite", { url }, key === undefined ? {} : { "x-api-key": key });
      expect(rpc.status).toBe(401);
      expect(await rpc.json()).toEqual({ code: "unauthenticated", message: UNAUTHENTICATED });
      expect((await grpcCheckSite(url, key)).error?.code).toBe(Code.Unauthenticated);
    }
    expect(bodies.size).toBe(1);
    expect((await store.usage(good.record.id, { budget: 300, windowSeconds: 86_400 })).used).toBe(0);
  });

  it("takes the key from the header when both are given, else from api_key", async () => {
    await start();
    const key = await newKey(store);
    const url = targets.url("/");
    expect((await rest("/api/v1/is-site-down", { url, api_key: "sd_garbage" }, { "x-api-key": key.secret })).status).toBe(200);
    expect((await rest("/api/v1/is-site-down", { url, api_key: key.secret }, { "x-api-key": "sd_garbage" })).status).toBe(401);
    const byQuery = await rest("/api/v1/is-site-down", { url, api_key: key.secret });
    expect(byQuery.status).toBe(200);
    expect(byQuery.headers.get("x-ratelimit-used")).toBe("4");
  });

  it("charges before validating: a bad url costs 2 or 5 and the 400 carries the usage headers", async () => {
    await start();
    const key = await newKey(store);
    const site = await rest("/api/v1/is-site-down", { url: "not a url" }, { "x-api-key": key.secret });
    expect(site.status).toBe(400);
    expect(site.headers.get("x-ratelimit-used")).toBe("2");
    const trace = await rest("/api/v1/redirect-check", { url: "ftp://127.0.0.1/", api_key: key.secret });
    expect(trace.status).toBe(400);
    expect(trace.headers.get("x-ratelimit-used")).toBe("7");
    const missing = await rest("/api/v1/is-site-down", { api_key: key.secret });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("x-ratelimit-remaining")).toBe("291");
  });

  it("holds a key with its own budget to it and reports that limit in the usage headers, on both doors", async () => {
    await start(300);
    const key = await newKey(store, "big audit");
    await store.setKeyBudget(key.record.id, 7);
    const first = await rest("/api/v1/is-site-down", { url: targets.url("/") }, { "x-api-key": key.secret });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit")).toBe("7");
    expect(first.headers.get("ratelimit-policy")).toBe('"credits";q=7;w=86400');
    expect((await connect("CheckSite", { url: targets.url("/") }, { "x-api-key": key.secret })).headers.get("x-ratelimit-remaining")).toBe(
      "3",
    );
    const refused = await rest("/api/v1/redirect-check", { url: targets.url("/") }, { "x-api-key": key.secret });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("7");
  });

  it("shares one budget across both doors and reports it on every 200 and 429", async () => {
    await start(9, 3_600);
    const key = await newKey(store);
    const url = targets.url("/");

    const first = await rest("/api/v1/is-site-down", { url, api_key: key.secret });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"credits";q=9;w=3600');
    expect(first.headers.get("ratelimit")).toBe('"credits";r=7;t=3600');
    expect(first.headers.get("x-ratelimit-limit")).toBe("9");
    expect(first.headers.get("x-ratelimit-used")).toBe("2");
    expect(first.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("x-ratelimit-remaining");

    const second = await connect("TraceRedirects", { url }, { "x-api-key": key.secret });
    expect(second.status).toBe(200);
    expect(second.headers.get("ratelimit")).toMatch(/^"credits";r=2;t=(3599|3600)$/);
    expect(second.headers.get("x-ratelimit-used")).toBe("7");

    const third = await grpcCheckSite(url, key.secret);
    expect(third.error).toBeUndefined();
    expect(third.header.get("x-ratelimit-remaining")).toBe("0");

    const refused = await rest("/api/v1/is-site-down", { url, api_key: key.secret });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^(3599|3600)$/);
    expect(refused.headers.get("ratelimit")).toMatch(/^"credits";r=0;t=(3599|3600)$/);
    expect(refused.headers.get("x-ratelimit-reset")).toBe(first.headers.get("x-ratelimit-reset"));
    const body = (await refused.json()) as { ok: boolean; error: { code: string; message: string } };
    expect(body.ok).toBe(false);
    expect(body.error.code).toBe("resource_exhausted");
    expect(body.error.message).toMatch(
      /^this call costs 2 credits but 0 of 9 are left in the rolling 1 h window; it becomes affordable in 1 h \(at (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC\)\.$/,
    );

    const refusedRpc = await connect("CheckSite", { url }, { "x-api-key": key.secret });
    expect(refusedRpc.status).toBe(429);
    expect(refusedRpc.headers.get("retry-after")).toMatch(/^(3599|3600)$/);
    expect((await store.usage(key.record.id, { budget: 9, windowSeconds: 3_600 })).used).toBe(9);
  });
});
