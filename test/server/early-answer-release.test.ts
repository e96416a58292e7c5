import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckSitesRequestSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type ServeTestService, startTestService } from "../fixtures/service-harness.js";
import { envelope } from "../fixtures/grpc-frames.js";
import { sampleValue } from "../fixtures/prometheus-text.js";

/**
 * A call refused for its body (too large) over HTTP/2 by a client that, like
 * any HTTP/2 client, keeps its connection open after the answer. Node's
 * compatibility response emits 'finish' and 'close' only when its stream is
 * destroyed, and Node destroys a stream closed with NO_ERROR (our reset after
 * the early answer, or the client's END_STREAM meeting ours) only once its
 * body has been read to the end, which no door does after refusing it. So
 * the stream was never destroyed: its in-flight slots were held for good
 * (8 for a streaming call), and its connection outlived the client's close.
 */
const LIMIT = 65_536;
const CHECK_SITE = "/sitediag.v1.DiagnosticsService/CheckSite";
const CHECK_SITES = "/sitediag.v1.DiagnosticsService/CheckSites";
// The early answer's reset, 500 ms after the answer (early-answer.ts).
const RESET_MS = 500;
// Past that reset: the stream is closed by then.
const KEEP_OPEN_MS = 2 * RESET_MS;

interface Refused {
  readonly name: string;
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
  readonly declareLength: boolean;
}

const url = `http://127.0.0.1:9/?${"p".repeat(LIMIT + 4_096)}`;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const proto = Buffer.from(toBinary(CheckSitesRequestSchema, create(CheckSitesRequestSchema, { urls: [url] })));

const CALLS: Refused[] = [
  {
    name: "Connect streaming, content-length",
    path: CHECK_SITES,
    contentType: "application/connect+json",
    body: envelope(json({ urls: [url] }), false),
    declareLength: true,
  },
  {
    name: "Connect streaming, no content-length",
    path: CHECK_SITES,
    contentType: "application/connect+json",
    body: envelope(json({ urls: [url] }), false),
    declareLength: false,
  },
  {
    name: "Connect unary, content-length (a control: refused from its length, its body never read, so Node drops it)",
    path: CHECK_SITE,
    contentType: "application/json",
    body: json({ url }),
    declareLength: true,
  },
  {
    name: "Connect unary, no content-length (a control: read past the limit, what is left fits the request's buffer)",
    path: CHECK_SITE,
    contentType: "application/json",
    body: json({ url }),
    declareLength: false,
  },
  {
    name: "gRPC streaming, content-length",
    path: CHECK_SITES,
    contentType: "application/grpc+proto",
    body: envelope(proto, false),
    declareLength: true,
  },
];

/** Makes the call, reads its answer to the server's END_STREAM, and leaves the session open (the caller closes it). */
async function refusedCall(
  baseUrl: string,
  key: string,
  call: Refused,
): Promise<{ session: http2.ClientHttp2Session; status: unknown; text: string }> {
  const session = http2.connect(baseUrl);
  session.on("error", () => undefined);
  const headers: http2.OutgoingHttpHeaders = { ":method": "POST", ":path": call.path, "content-type": call.contentType, "x-api-key": key };
  if (call.contentType.startsWith("application/grpc")) headers.te = "trailers";
  else headers["connect-protocol-version"] = "1";
  if (call.declareLength) headers["content-length"] = String(call.body.length);
  const stream = session.request(headers);
  stream.on("error", () => undefined);
  let status: unknown;
  let text = "";
  stream.on("response", (got) => (status = got[":status"]));
  stream.on("trailers", (got) => (text += ` grpc-status: ${String(got["grpc-status"])}`));
  stream.on("data", (data: Buffer) => (text += data.toString("latin1")));
  const answered = new Promise<void>((resolve) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
  });
  const half = Math.ceil(call.body.length / 2);
  stream.write(call.body.subarray(0, half));
  stream.end(call.body.subarray(half));
  await answered;
  return { session, status, text };
}

describe("an early answer over HTTP/2, the client keeping its connection", () => {
  let service: ServeTestService;

  beforeAll(async () => {
    service = await startTestService({ as: "serve", config: { maxInflight: 64 } });
  });

  afterAll(async () => {
    await service?.close();
  });

  async function inflight(): Promise<number | undefined> {
    return sampleValue(await (await fetch(`${service.url}/metrics`)).text(), "sitediag_inflight_checks");
  }

  it.each(CALLS)("$name: the slots go back with the answer, and stay back while the connection is open", async (call) => {
    // Measured against the gauge before the call, so each case tells only of its own slots.
    const before = await inflight();
    const { session, status, text } = await refusedCall(service.url, service.key, call);
    try {
      expect(text, String(status)).toMatch(/resource_exhausted|grpc-status: 8/);
      const answeredAt = performance.now();
      const samples: { readonly atMs: number; readonly held: number | undefined }[] = [];
      // Watched while the connection stays open, across the reset that follows the answer.
      while (performance.now() - answeredAt < KEEP_OPEN_MS) {
        const held = await inflight();
        samples.push({ atMs: performance.now() - answeredAt, held });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const seen = samples.map(({ atMs, held }) => `${Math.round(atMs)} ms: ${held}`).join(", ");
      expect(samples.at(-1)?.held, `in flight after the answer (${before} before): ${seen}`).toBe(before);
      // With the answer, not with the reset that follows it: the first reading, taken after the answer, shows the
      // slots back. Told only when that reading came back before the reset was due; a machine too busy to read
      // the gauge within that time cannot tell the two apart, and the reading above still holds it to "for good".
      const first = samples[0];
      if (first !== undefined && first.atMs < RESET_MS) expect(first.held, seen).toBe(before);
    } finally {
      session.destroy();
    }
  });
});

describe("an early answer over HTTP/2: the connection ends when the client closes it", () => {
  const PER_PEER = 3;
  let service: ServeTestService;

  beforeAll(async () => {
    service = await startTestService({ as: "serve", config: { maxInflight: 64 }, limits: { maxConnectionsPerPeer: PER_PEER } });
  });

  afterAll(async () => {
    await service?.close();
  });

  it(`takes a new connection after ${PER_PEER + 1} refused calls, each on its own connection closed after the reset`, async () => {
    const call = CALLS[0] as Refused;
    for (let index = 0; index < PER_PEER + 1; index++) {
      const { session, text } = await refusedCall(service.url, service.key, call);
      expect(text, `call ${index + 1}`).toMatch(/resource_exhausted/);
      await new Promise((resolve) => setTimeout(resolve, KEEP_OPEN_MS));
      session.destroy();
      // The server sees the close a moment later.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 20_000);
});
