import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagnosticsService, VantageSiteChecksSchema, VantageTracesSchema, VantageVerdict } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { openApiDocumentJson } from "../../src/openapi/openapi-document.js";
import { renderMessage } from "../../src/server/rest/rest-render.js";
import { createResponseValidator } from "../fixtures/response-validator.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";

// A call from several vantages through every door, on the embedded default:
// one vantage, `local`, running on the service's own runner (SQLite store).

let targets: HttpTargets;
let service: ServeTestService;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/start": { kind: "redirect", status: 301, location: "/home" },
      "/home": { kind: "respond", status: 200 },
      "/broken": { kind: "respond", status: 503 },
    },
  });
  service = await startTestService({ as: "serve", config: { creditBudget: 1_000, tracePorts: [targets.httpPort] } });
});

afterAll(async () => {
  await service?.close();
  await targets?.close();
});

const openApi = createResponseValidator(openApiDocumentJson());

/** A REST call, its answer checked against the OpenAPI document as it comes. */
async function rest(path: string, query: Record<string, string>): Promise<{ status: number; body: JsonObject; remaining: string | null }> {
  const response = await fetch(`${service.url}/api/v1/${path}?${new URLSearchParams(query).toString()}`, {
    headers: { "x-api-key": service.key },
  });
  const body = (await response.json()) as JsonObject;
  expect(openApi.body(`/api/v1/${path}`, response.status, body)).toEqual([]);
  return { status: response.status, body, remaining: response.headers.get("x-ratelimit-remaining") };
}

async function used(): Promise<number> {
  return (await service.store.usage(service.keyId, { budget: 1_000, windowSeconds: 86_400 })).used;
}

/** Times are measured per call: two answers differ there and only there. */
function timeless(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, item: unknown) =>
      ["responseTime", "elapsedMs", "totalTimeMs", "responseTimeMs"].includes(key) ? typeof item : item,
    ),
  ) as unknown;
}

const transports = {
  connect: () => createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }),
  grpc: () => createGrpcTransport({ baseUrl: service.url }),
};

describe("is-site-down with vantages=all on one instance", () => {
  it("answers one entry, local, whose data is the plain answer, and the verdict over it; 2 credits", async () => {
    const url = targets.url("/start");
    const before = await used();
    const plain = await rest("is-site-down", { url });
    const spent = (await used()) - before;
    const { status, body } = await rest("is-site-down", { url, vantages: "all" });
    expect(status).toBe(200);
    expect((await used()) - before - spent).toBe(2);
    expect(Object.keys(body.data as JsonObject)).toEqual(["requestedUrl", "vantages"]);
    expect(timeless(body)).toEqual(
      timeless({
        ok: true,
        data: {
          requestedUrl: url,
          vantages: {
            verdict: "up_everywhere",
            entries: [
              {
                vantage: {
                  name: "local",
                  label: null,
                  location: null,
                  state: "done",
                  elapsedMs: 0,
                  code: null,
                  reason: null,
                  version: null,
                  lastSeen: null,
                },
                data: plain.body.data,
              },
            ],
            differences: null,
          },
        },
        meta: { tool: "is-site-down", version: "v1" },
      }),
    );
  });

  it("a down site is down everywhere; details ride in the entry when asked", async () => {
    const { body } = await rest("is-site-down", { url: targets.url("/broken"), vantages: "local", details: "true" });
    const vantages = (body.data as JsonObject).vantages as JsonObject;
    expect(vantages.verdict).toBe("down_everywhere");
    const [entry] = vantages.entries as JsonObject[];
    expect((entry?.data as JsonObject).status).toBe("down");
    expect(((entry?.data as JsonObject).details as JsonObject).code).toBe("http_server_error");
  });

  it("a well-formed name no instance serves is that entry's unavailable, refunded: the call costs the vantages that answered", async () => {
    const before = await used();
    const { status, body } = await rest("is-site-down", { url: targets.url("/home"), vantages: "local,ap-south" });
    expect(status).toBe(200);
    const vantages = (body.data as JsonObject).vantages as JsonObject;
    expect(vantages.verdict).toBe("up_where_answered");
    expect((vantages.entries as JsonObject[]).map((entry) => entry.vantage)).toEqual([
      {
        name: "ap-south",
        label: null,
        location: null,
        state: "unavailable",
        elapsedMs: 0,
        code: "no_live_instance",
        reason: expect.stringContaining("No instance") as string,
        version: null,
        lastSeen: null,
      },
      expect.objectContaining({ name: "local", state: "done" }) as JsonObject,
    ]);
    expect((vantages.entries as JsonObject[])[0]?.data).toBeNull();
    expect((await used()) - before).toBe(2);
  });

  it("only unknown vantages: verdict unavailable, and nothing kept of the charge", async () => {
    const before = await used();
    const { body, remaining } = await rest("is-site-down", { url: targets.url("/home"), vantages: "eu-west,us-east" });
    expect(((body.data as JsonObject).vantages as JsonObject).verdict).toBe("unavailable");
    expect(await used()).toBe(before);
    expect(Number(remaining)).toBe(1_000 - before);
  });

  it.each([
    ["EU-West", "input_vantages_syntax"],
    ["all,local", "input_vantages_syntax"],
    ["local,,eu", "input_vantages_syntax"],
    ["-eu", "input_vantages_syntax"],
    [Array.from({ length: 17 }, (_, i) => `v${i}`).join(","), "input_vantages_too_many"],
  ])("vantages=%s is a 400 naming the rule, and charges nothing", async (vantages) => {
    const before = await used();
    const { status, body } = await rest("is-site-down", { url: targets.url("/home"), vantages });
    expect(status).toBe(400);
    expect((body.error as JsonObject).message).toMatch(/^(vantages must be vantage names|At most 16 vantages)/);
    expect(await used()).toBe(before);
  });

  it("a target this vantage's own policy refuses is its entry's refused, charged: the vantage judged it", async () => {
    const before = await used();
    const { status, body } = await rest("is-site-down", { url: "http://10.0.0.1/", vantages: "all" });
    expect(status).toBe(200);
    const vantages = (body.data as JsonObject).vantages as JsonObject;
    expect(vantages.verdict).toBe("unavailable");
    expect((vantages.entries as JsonObject[])[0]).toEqual({
      vantage: expect.objectContaining({
        name: "local",
        state: "refused",
        code: "input_non_public_address",
        reason: expect.stringContaining("10.0.0.1") as string,
      }) as JsonObject,
      data: null,
    });
    expect((await used()) - before).toBe(2);
  });

  it("an input no vantage could read is the plain call's 400, and costs what a plain call costs", async () => {
    const plain = await rest("is-site-down", { url: "example.com" });
    const before = await used();
    const { status, body } = await rest("is-site-down", { url: "example.com", vantages: "local,eu-west,us-east" });
    expect(status).toBe(400);
    expect(body.error).toEqual(plain.body.error);
    expect((await used()) - before).toBe(2);
  });

  it("without vantages the answer has no trace of them", async () => {
    const { body } = await rest("is-site-down", { url: targets.url("/home") });
    expect(Object.keys(body.data as JsonObject)).not.toContain("vantages");
  });
});

describe("redirect-check with vantages", () => {
  it("one entry per vantage with the trace's data, 5 credits per vantage that answered", async () => {
    const before = await used();
    const { status, body } = await rest("redirect-check", { url: targets.url("/start"), vantages: "all" });
    expect(status).toBe(200);
    expect(await used()).toBe(before + 5);
    const data = body.data as JsonObject;
    expect(Object.keys(data)).toEqual(["input", "vantages"]);
    const vantages = data.vantages as JsonObject;
    expect(vantages.verdict).toBe("up_everywhere");
    const [entry] = vantages.entries as JsonObject[];
    expect((entry?.data as JsonObject).chainStatus).toBe("Redirects detected");
  });
});

describe.each(Object.entries(transports))("the %s door", (_door, transport) => {
  it("answers what REST answers, for both diagnostics", async () => {
    const client = createClient(DiagnosticsService, transport());
    const headers = { "x-api-key": service.key };
    const url = targets.url("/start");
    const site = await client.checkSite({ url, vantages: ["local", "ap-south"] }, { headers });
    expect(site.requestedUrl).toBe(url);
    expect(site.statusCode).toBeUndefined();
    const viaRest = await rest("is-site-down", { url, vantages: "local,ap-south" });
    expect(site.vantages).toBeDefined();
    if (site.vantages === undefined) return;
    expect(timeless(renderMessage(VantageSiteChecksSchema, site.vantages))).toEqual(timeless((viaRest.body.data as JsonObject).vantages));
    const trace = await client.traceRedirects({ url, vantages: ["all"] }, { headers });
    const traceRest = await rest("redirect-check", { url, vantages: "all" });
    expect(trace.vantages).toBeDefined();
    if (trace.vantages === undefined) return;
    expect(timeless(renderMessage(VantageTracesSchema, trace.vantages))).toEqual(timeless((traceRest.body.data as JsonObject).vantages));
  });

  it("refuses a list that is not one with InvalidArgument, charging nothing", async () => {
    const client = createClient(DiagnosticsService, transport());
    const before = await used();
    const error = await client
      .checkSite({ url: targets.url("/home"), vantages: ["all", "local"] }, { headers: { "x-api-key": service.key } })
      .then(
        () => undefined,
        (thrown: unknown) => ConnectError.from(thrown),
      );
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(await used()).toBe(before);
  });
});

describe("the streaming doors: VantageCheckSite and VantageTraceRedirects", () => {
  it.each(Object.entries(transports))(
    "%s: each entry as it arrives, then the verdict; charged per vantage, unavailable ones refunded",
    async (_door, transport) => {
      const client = createClient(DiagnosticsService, transport());
      const url = targets.url("/start");
      const before = await used();
      const messages = [];
      for await (const message of client.vantageCheckSite({ url, vantages: ["all"] }, { headers: { "x-api-key": service.key } }))
        messages.push(message);
      expect(messages).toHaveLength(2);
      expect(messages[0]?.entry?.vantage?.name).toBe("local");
      expect(messages[0]?.entry?.data?.statusCode).toBe(200);
      expect(messages[0]?.verdict).toBeUndefined();
      expect(messages[1]?.entry).toBeUndefined();
      expect(messages[1]?.verdict).toBe(VantageVerdict.UP_EVERYWHERE);
      expect((await used()) - before).toBe(2);
      const traced = [];
      for await (const message of client.vantageTraceRedirects(
        { url, vantages: ["local,nowhere"] },
        { headers: { "x-api-key": service.key } },
      ))
        traced.push(message);
      expect(traced.map((message) => message.entry?.vantage?.name ?? message.verdict)).toEqual([
        "nowhere",
        "local",
        VantageVerdict.UP_WHERE_ANSWERED,
      ]);
      expect((await used()) - before).toBe(2 + 5);
    },
  );

  it("REST: POST /api/v1/vantages/is-site-down answers NDJSON, one envelope per message, the verdict last", async () => {
    const url = targets.url("/home");
    const response = await fetch(`${service.url}/api/v1/vantages/is-site-down`, {
      method: "POST",
      headers: { "x-api-key": service.key, "content-type": "application/json" },
      body: JSON.stringify({ url, vantages: ["local", "ap-south"] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const lines = (await response.text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as JsonObject);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatchObject({ ok: true, meta: { tool: "is-site-down", version: "v1" } });
    expect(lines.map((line) => Object.keys(line.data as JsonObject))).toEqual([
      ["entry", "verdict", "differences"],
      ["entry", "verdict", "differences"],
      ["entry", "verdict", "differences"],
    ]);
    expect(((lines[0]?.data as JsonObject).entry as JsonObject).vantage).toMatchObject({ name: "ap-south", state: "unavailable" });
    const local = (lines[1]?.data as JsonObject).entry as JsonObject;
    expect(local.vantage).toMatchObject({ name: "local", state: "done" });
    // The entry is the unary answer's: the same message, rendered alike.
    const unary = await rest("is-site-down", { url, vantages: "local" });
    const unaryEntry = (((unary.body.data as JsonObject).vantages as JsonObject).entries as JsonObject[])[0];
    expect(timeless(local)).toEqual(timeless(unaryEntry));
    expect(lines[2]?.data).toEqual({ entry: null, verdict: "up_where_answered", differences: null });
  });

  it("announce: the stream opens with every vantage asked, by name, and the deadline; then the entries and the verdict as without it", async () => {
    const client = createClient(DiagnosticsService, transports.connect());
    const messages = [];
    for await (const message of client.vantageTraceRedirects(
      { url: targets.url("/home"), vantages: ["local,ap-south"], announce: true },
      { headers: { "x-api-key": service.key } },
    ))
      messages.push(message);
    expect(messages).toHaveLength(4);
    expect(messages[0]?.entry).toBeUndefined();
    expect(messages[0]?.verdict).toBeUndefined();
    expect(messages[0]?.asked?.vantages.map((vantage) => vantage.name)).toEqual(["ap-south", "local"]);
    expect(messages[0]?.asked?.deadlineMs).toBeGreaterThan(0);
    expect(messages.slice(1).map((message) => message.asked)).toEqual([undefined, undefined, undefined]);
    expect(messages[3]?.verdict).toBe(VantageVerdict.UP_WHERE_ANSWERED);
    const response = await fetch(`${service.url}/api/v1/vantages/is-site-down`, {
      method: "POST",
      headers: { "x-api-key": service.key, "content-type": "application/json" },
      body: JSON.stringify({ url: targets.url("/home"), vantages: ["local"], announce: true }),
    });
    const lines = (await response.text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as JsonObject);
    expect(lines.map((line) => Object.keys(line.data as JsonObject))).toEqual([
      ["entry", "verdict", "differences", "asked"],
      ["entry", "verdict", "differences"],
      ["entry", "verdict", "differences"],
    ]);
    expect((lines[0]?.data as JsonObject).asked).toEqual({
      vantages: [{ name: "local", label: null, location: null }],
      deadlineMs: 32_000,
    });
  });

  it("naming no vantage is a 400 before any charge", async () => {
    const before = await used();
    const response = await fetch(`${service.url}/api/v1/vantages/redirect-check`, {
      method: "POST",
      headers: { "x-api-key": service.key, "content-type": "application/json" },
      body: JSON.stringify({ url: targets.url("/home") }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/^vantages must be vantage names/);
    expect(await used()).toBe(before);
  });
});
