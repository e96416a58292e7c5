import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService, UserAgent } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { traceVerdict, checkVerdict } from "../../src/shared/batch-verdict.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { CRAWLER_USER_AGENTS } from "../../src/shared/user-agents.js";
import { USER_AGENT } from "../../src/package-info.js";
import { createResponseValidator } from "../fixtures/response-validator.js";
import { type HttpTargets, type ReceivedRequest, type TargetRoute, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

// What the final page tells search engines, and the User-Agent a diagnostic
// speaks as (issue 39), through every door against real loopback pages.

const HTML = { "content-type": "text/html; charset=utf-8" };
const page = (head: string, body = "<h1>Blue widgets</h1><p>Text.</p>", headers: Record<string, string> = {}): TargetRoute => ({
  kind: "respond",
  status: 200,
  headers: { ...HTML, ...headers },
  body: `<!doctype html><html><head>${head}</head><body>${body}</body></html>`,
});

let targets: HttpTargets;
let service: ServeTestService;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/clean": page("<title>Blue widgets | Example</title><meta name=robots content='index, follow'>"),
      "/noindex": page('<title>Moved page</title><meta name="robots" content="noindex, follow">'),
      "/noindex-header": page("<title>Moved page</title>", undefined, { "x-robots-tag": "googlebot: noindex" }),
      "/canonical": page('<title>Moved page</title><link rel="canonical" href="/the-real-one">'),
      "/soft": page("<title>Page not found | Example</title>"),
      "/deep/old/page": { kind: "redirect", status: 301, location: "/" },
      "/": page("<title>Example home</title>"),
      "/old-noindex": { kind: "redirect", status: 301, location: "/noindex" },
      // Redirects Googlebot elsewhere and refuses Bingbot; browsers get the page.
      "/by-agent": (request: ReceivedRequest) => {
        const agent = String(request.headers["user-agent"] ?? "");
        if (agent.includes("Googlebot")) return { kind: "redirect", status: 301, location: "/for-bots" };
        if (agent.includes("bingbot")) return { kind: "respond", status: 403, body: "no bots" };
        return page("<title>For people</title>");
      },
      "/for-bots": page("<title>For bots</title>"),
    },
  });
  service = await startTestService({ as: "serve", config: { creditBudget: 10_000, tracePorts: [targets.httpPort] } });
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
});

const openApi = createResponseValidator(openApiDocumentJson());

async function rest(path: string, query: Record<string, string>): Promise<{ status: number; body: JsonObject }> {
  const response = await fetch(`${service.url}/api/v1/${path}?${new URLSearchParams(query).toString()}`, {
    headers: { "x-api-key": service.key },
  });
  const body = (await response.json()) as JsonObject;
  expect(openApi.body(`/api/v1/${path}`, response.status, body)).toEqual([]);
  return { status: response.status, body };
}

async function used(): Promise<number> {
  return (await service.store.usage(service.keyId, { budget: 10_000, windowSeconds: 86_400 })).used;
}

function timeless(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, item: unknown) =>
      ["responseTime", "elapsedMs", "totalTimeMs", "responseTimeMs"].includes(key) ? typeof item : item,
    ),
  ) as unknown;
}

const codes = (warnings: unknown): string[] => (warnings as JsonObject[]).map((warning) => String(warning.code));
const SEARCH_CODES = ["noindex", "canonical_elsewhere", "redirect_to_home", "soft_404_suspected"];
const data = (body: JsonObject) => body.data as JsonObject;
const details = (body: JsonObject) => data(body).details as JsonObject;

const transports = {
  connect: () => createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }),
  grpc: () => createGrpcTransport({ baseUrl: service.url }),
};

describe("REST with details: each signal, on both operations", () => {
  it.each([
    ["/noindex", "noindex", { noindex: { source: "meta", directive: "noindex", scope: "robots" } }],
    ["/noindex-header", "noindex", { noindex: { source: "header", directive: "noindex", scope: "googlebot" } }],
    ["/canonical", "canonical_elsewhere", { canonical: { url: "", source: "link_element", elsewhere: true } }],
    ["/soft", "soft_404_suspected", { soft404: { source: "title", text: "Page not found | Example" } }],
    ["/deep/old/page", "redirect_to_home", { redirectToHome: true }],
  ])("%s: %s", async (path, code, search) => {
    const url = targets.url(path);
    const expected = "canonical" in search ? { canonical: { ...search.canonical, url: targets.url("/the-real-one") } } : search;
    const check = await rest("is-site-down", { url, details: "true" });
    expect(details(check.body).search).toMatchObject(expected);
    expect(codes(details(check.body).warnings)).toEqual([code]);
    const trace = await rest("redirect-check", { url, details: "true" });
    expect(details(trace.body).search).toMatchObject(expected);
    expect(codes(details(trace.body).warnings)).toEqual([code]);
    // The contract's warnings list is open ("issues observed"): with details, redirect-check's own list carries them too.
    expect(codes(data(trace.body).warnings).filter((each) => SEARCH_CODES.includes(each))).toEqual([code]);
    const warning = (data(trace.body).warnings as JsonObject[]).find((each) => each.code === code);
    expect(warning).toMatchObject({ severity: "warning", hop: (data(trace.body).chain as JsonObject[]).length });
  });

  it("a clean page raises none of them, and its search says so", async () => {
    for (const tool of ["is-site-down", "redirect-check"]) {
      const { body } = await rest(tool, { url: targets.url("/clean"), details: "true" });
      expect(details(body).search).toEqual({ noindex: null, canonical: null, redirectToHome: false, soft404: null, bodyRead: true });
      expect(codes(details(body).warnings)).toEqual([]);
      if (tool === "redirect-check") expect(codes(data(body).warnings)).toEqual([]);
    }
  });

  it("without details nothing is read and the answer is the contract's, byte for byte the same with user_agent=browser", async () => {
    for (const tool of ["is-site-down", "redirect-check"]) {
      const plain = await rest(tool, { url: targets.url("/old-noindex") });
      expect(data(plain.body).details).toBeUndefined();
      if (tool === "redirect-check") expect(codes(data(plain.body).warnings).filter((each) => SEARCH_CODES.includes(each))).toEqual([]);
      const browser = await rest(tool, { url: targets.url("/old-noindex"), user_agent: "browser" });
      expect(JSON.stringify(timeless(browser.body))).toBe(JSON.stringify(timeless(plain.body)));
    }
  });
});

describe("user_agent", () => {
  it("REST: Googlebot is redirected elsewhere, Bingbot refused, the browser served; each sent its documented string", async () => {
    const url = targets.url("/by-agent");
    const asBrowser = await rest("redirect-check", { url });
    expect(data(asBrowser.body).chainStatus).toBe("Healthy");
    const asGoogle = await rest("redirect-check", { url, user_agent: "googlebot" });
    expect(data(asGoogle.body)).toMatchObject({ chainStatus: "Redirects detected", finalUrl: targets.url("/for-bots") });
    const asBing = await rest("is-site-down", { url, user_agent: "bingbot" });
    expect(data(asBing.body)).toMatchObject({ status: "up", statusCode: 403 });
    const agents = targets.requests.filter((request) => request.target === "/by-agent").map((request) => request.headers["user-agent"]);
    expect(new Set(agents)).toEqual(new Set([USER_AGENT, CRAWLER_USER_AGENTS.googlebot, CRAWLER_USER_AGENTS.bingbot]));
  });

  it.each(Object.keys(transports) as (keyof typeof transports)[])(
    "%s: the field, on a single call, a batch and a vantage call",
    async (door) => {
      const client = createClient(DiagnosticsService, transports[door]());
      const headers = { "x-api-key": service.key };
      const url = targets.url("/by-agent");
      const trace = await client.traceRedirects({ url, userAgent: UserAgent.GOOGLEBOT }, { headers });
      expect(trace.finalUrl).toBe(targets.url("/for-bots"));
      const check = await client.checkSite({ url, userAgent: UserAgent.BINGBOT }, { headers });
      expect(check.statusCode).toBe(403);
      const vantage = await client.checkSite({ url, userAgent: UserAgent.GOOGLEBOT, vantages: ["all"] }, { headers });
      expect(vantage.vantages?.entries[0]?.data?.finalUrl).toBe(targets.url("/for-bots"));
      const items = [];
      for await (const item of client.traceRedirectsBatch(
        { items: [{ url }, { url: targets.url("/clean") }], userAgent: UserAgent.GOOGLEBOT },
        { headers },
      ))
        items.push(item);
      const first = items.find((item) => item.index === 0);
      expect(first?.outcome.case === "result" ? first.outcome.value.finalUrl : null).toBe(targets.url("/for-bots"));
      // details.search and the warnings, as the typed messages carry them.
      const detailed = await client.traceRedirects({ url: targets.url("/old-noindex"), details: true }, { headers });
      expect(detailed.details?.search?.noindex).toMatchObject({ source: "meta", directive: "noindex", scope: "robots" });
      expect(detailed.warnings.map((warning) => warning.code)).toContain("noindex");
      const checked = await client.checkSite({ url: targets.url("/soft"), details: true }, { headers });
      expect(checked.details?.search?.soft404).toMatchObject({ source: "title", text: "Page not found | Example" });
      expect(checked.details?.warnings.map((warning) => warning.code)).toEqual(["soft_404_suspected"]);
      const checks = [];
      for await (const item of client.checkSites({ urls: [url], userAgent: UserAgent.BINGBOT }, { headers })) checks.push(item);
      expect(checks[0]?.outcome.case === "result" ? checks[0].outcome.value.statusCode : null).toBe(403);
    },
  );

  it("an unknown value is a 400 input_user_agent on REST, and nothing is charged", async () => {
    const before = await used();
    const { status, body } = await rest("redirect-check", { url: targets.url("/clean"), user_agent: "yandexbot" });
    expect(status).toBe(400);
    expect(body.error).toEqual({ code: "invalid_argument", message: "user_agent must be browser, googlebot or bingbot" });
    expect(await used()).toBe(before);
  });

  it("the REST batch's JSON body takes userAgent as the query does: its string, and another one is the same 400, uncharged", async () => {
    const post = (body: unknown) =>
      fetch(`${service.url}/api/v1/batch/redirect-check`, {
        method: "POST",
        headers: { "x-api-key": service.key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const answered = await post({ items: [{ url: targets.url("/by-agent") }], userAgent: "googlebot" });
    expect(answered.status).toBe(200);
    const line = JSON.parse((await answered.text()).trim()) as { data: { finalUrl: string } };
    expect(line.data.finalUrl).toBe(targets.url("/for-bots"));
    const before = await used();
    const refused = await post({ items: [{ url: targets.url("/clean") }], user_agent: "yandexbot" });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: unknown }).error).toEqual({
      code: "invalid_argument",
      message: "user_agent must be browser, googlebot or bingbot",
    });
    expect(await used()).toBe(before);
  });

  it.each(Object.keys(transports) as (keyof typeof transports)[])(
    "%s: a number the enum does not have is InvalidArgument, nothing charged",
    async (door) => {
      const client = createClient(DiagnosticsService, transports[door]());
      const before = await used();
      const refused = await client
        .checkSite({ url: targets.url("/clean"), userAgent: 99 as UserAgent }, { headers: { "x-api-key": service.key } })
        .then(
          () => null,
          (error: unknown) => ConnectError.from(error),
        );
      expect(refused?.code).toBe(Code.InvalidArgument);
      expect(refused?.rawMessage).toBe("user_agent must be browser, googlebot or bingbot");
      expect(await used()).toBe(before);
    },
  );
});

describe("the batch verdict", () => {
  it("noindex, a soft 404 and a deep URL sent home fail their rows; a canonical elsewhere passes with a word of it", async () => {
    const client = createClient(DiagnosticsService, transports.connect());
    const paths = ["/old-noindex", "/soft", "/deep/old/page", "/canonical", "/clean"];
    const verdicts = new Map<string, { verdict: string; code: string; reason: string }>();
    for await (const item of client.traceRedirectsBatch(
      { items: paths.map((path) => ({ url: targets.url(path) })), details: true },
      { headers: { "x-api-key": service.key } },
    )) {
      verdicts.set(paths[item.index] ?? "", traceVerdict(item));
    }
    expect(verdicts.get("/old-noindex")).toMatchObject({ verdict: "FAIL", code: "noindex" });
    expect(verdicts.get("/soft")).toMatchObject({ verdict: "FAIL", code: "soft_404_suspected" });
    expect(verdicts.get("/deep/old/page")).toMatchObject({ verdict: "FAIL", code: "redirect_to_home" });
    expect(verdicts.get("/canonical")).toMatchObject({
      verdict: "PASS",
      code: "",
      reason: expect.stringContaining(targets.url("/the-real-one")) as string,
    });
    expect(verdicts.get("/clean")).toEqual({ verdict: "PASS", code: "", reason: "" });
    const checks = new Map<string, string>();
    for await (const item of client.checkSites(
      { urls: paths.map((path) => targets.url(path)), details: true },
      { headers: { "x-api-key": service.key } },
    )) {
      checks.set(paths[item.index] ?? "", checkVerdict(item).code);
    }
    expect(Object.fromEntries(checks)).toEqual({
      "/old-noindex": "noindex",
      "/soft": "soft_404_suspected",
      "/deep/old/page": "redirect_to_home",
      "/canonical": "",
      "/clean": "",
    });
  });

  it("a deep URL sent home passes when the row expected that very URL", async () => {
    const client = createClient(DiagnosticsService, transports.connect());
    for await (const item of client.traceRedirectsBatch(
      { items: [{ url: targets.url("/deep/old/page"), expectedFinalUrl: targets.url("/") }], details: true },
      { headers: { "x-api-key": service.key } },
    )) {
      expect(traceVerdict(item)).toMatchObject({ verdict: "PASS" });
    }
  });
});
