import { once } from "node:events";
import { get, STATUS_CODES } from "node:http";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Prober } from "../../../src/probe/hop-types.js";
import { generateHead, mutateHead, asLlhttpReads } from "../../fixtures/head-corpus.js";
import { seededRandom } from "../../fixtures/seeded-random.js";
import { loopbackProber } from "../../fixtures/test-env.js";

/**
 * The probe's head reader against llhttp (Node's own HTTP client parser, in
 * its strict mode), on the same bytes written by a raw loopback server. They
 * must agree on every head: accepted or refused, and when accepted the same
 * status, reason phrase and fields. The documented deliberate differences
 * (docs/probe.md, "Reading a response head") are applied, never skipped:
 * llhttp is given bare LFs as CRLF (the probe accepts bare LF) and each
 * obs-fold replaced by one SP (the probe unfolds, llhttp refuses); a head
 * with two different Location fields must be one llhttp accepted and the
 * probe refused with CONFLICTING_LOCATION; a framing field llhttp refuses is
 * one the probe ignores (it reads no body); a status below 100 is one llhttp
 * takes and the probe refuses.
 */
type Verdict =
  | {
      readonly ok: true;
      readonly status: number;
      readonly statusText: string;
      readonly headers: Readonly<Record<string, readonly string[]>>;
    }
  | { readonly ok: false; readonly code: string };

const CORPUS_SIZE = 2_500;
const FUZZ_SIZE = 1_500;
/** HEAD_CORPUS_SEED runs another corpus (a longer fuzz campaign); the default is the one CI runs. */
const SEED = Number(process.env.HEAD_CORPUS_SEED ?? 0x51735d1a);

const heads: Buffer[] = [];
let server: Server;
const sockets = new Set<Socket>();
let prober: Prober;

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let request = "";
    socket.on("data", (chunk) => {
      request += chunk.toString("latin1");
      if (!request.includes("\r\n\r\n")) return;
      // "/<index>" for the probe, "/<index>/crlf" for llhttp given CRLF endings.
      const [index, form] = (request.split(" ", 2)[1] ?? "/").slice(1).split("/");
      const head = heads[Number(index)] ?? Buffer.alloc(0);
      socket.end(form === "crlf" ? asLlhttpReads(head) : head);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  prober = loopbackProber();
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  await prober.close();
});

const port = () => (server.address() as AddressInfo).port;

function llhttpVerdict(index: number): Promise<Verdict> {
  return new Promise((resolve) => {
    const request = get(
      { host: "127.0.0.1", port: port(), path: `/${index}/crlf`, agent: false, maxHeaderSize: 1 << 20, insecureHTTPParser: false },
      (response) => {
        const headers: Record<string, string[]> = {};
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
          (headers[(response.rawHeaders[i] as string).toLowerCase()] ??= []).push(response.rawHeaders[i + 1] as string);
        resolve({ ok: true, status: response.statusCode ?? 0, statusText: response.statusMessage ?? "", headers });
        response.destroy();
      },
    );
    request.on("error", (error: NodeJS.ErrnoException) => resolve({ ok: false, code: error.code ?? "ERROR" }));
  });
}

async function probeVerdict(index: number): Promise<Verdict> {
  const outcome = await prober.hop({
    url: new URL(`http://127.0.0.1:${port()}/${index}`),
    method: "GET",
    timeoutMs: 5_000,
    ports: { kind: "fetch-safe" },
  });
  if (outcome.kind === "refused" || outcome.kind === "overloaded") throw new Error(JSON.stringify(outcome));
  if (outcome.kind === "failure") return { ok: false, code: outcome.failure.cause };
  const headers: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(outcome.response.headers)) headers[name] = typeof value === "string" ? [value] : [...value];
  return { ok: true, status: outcome.response.status, statusText: outcome.response.statusText, headers };
}

/** llhttp's codes for a body's framing (Content-Length, Transfer-Encoding). */
const FRAMING_CODES: ReadonlySet<string> = new Set([
  "HPE_INVALID_CONTENT_LENGTH",
  "HPE_UNEXPECTED_CONTENT_LENGTH",
  "HPE_INVALID_TRANSFER_ENCODING",
]);

interface Disagreement {
  readonly index: number;
  readonly head: string;
  readonly probe: Verdict;
  readonly llhttp: Verdict;
}

/** Normalises what a documented difference allows; null when the two agree. */
function disagreement(index: number, probe: Verdict, llhttp: Verdict): Disagreement | null {
  const head = JSON.stringify(heads[index]?.toString("latin1"));
  if (!probe.ok && probe.code === "CONFLICTING_LOCATION") {
    const locations = llhttp.ok ? (llhttp.headers.location ?? []) : [];
    return locations.length > 1 && locations.some((value) => value !== locations[0]) ? null : { index, head, probe, llhttp };
  }
  const raw = heads[index]?.toString("latin1") ?? "";
  // Framing is judged only when a body is read: llhttp refuses a bad Content-Length the probe never uses.
  if (probe.ok && !llhttp.ok && FRAMING_CODES.has(llhttp.code))
    return "content-length" in probe.headers || "transfer-encoding" in probe.headers ? null : { index, head, probe, llhttp };
  // A status below 100 is no status: llhttp takes 000 to 099, the probe refuses them.
  if (!probe.ok && llhttp.ok && /(^|\n)HTTP\/1\.[01] 0\d\d/.test(raw)) return null;
  if (probe.ok !== llhttp.ok) return { index, head, probe, llhttp };
  if (!probe.ok || !llhttp.ok) return null;
  // The hop gives the standard phrase where the server sent none.
  const phrase = llhttp.statusText === "" ? (STATUS_CODES[llhttp.status] ?? "") : llhttp.statusText;
  const same =
    probe.status === llhttp.status &&
    probe.statusText === phrase &&
    JSON.stringify(sorted(probe.headers)) === JSON.stringify(sorted(llhttp.headers));
  return same ? null : { index, head, probe, llhttp };
}

function sorted(headers: Readonly<Record<string, readonly string[]>>): [string, readonly string[]][] {
  return Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

async function compareAll(from: number, to: number): Promise<{ disagreements: Disagreement[]; accepted: number; refused: number }> {
  const disagreements: Disagreement[] = [];
  let accepted = 0;
  let refused = 0;
  let next = from;
  const worker = async () => {
    while (next < to) {
      const index = next++;
      const [probe, llhttp] = await Promise.all([probeVerdict(index), llhttpVerdict(index)]);
      if (probe.ok) accepted++;
      else refused++;
      const found = disagreement(index, probe, llhttp);
      if (found !== null) disagreements.push(found);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { disagreements, accepted, refused };
}

describe("the head reader agrees with llhttp", () => {
  it(`on ${CORPUS_SIZE} generated heads (seed ${SEED.toString(16)})`, async () => {
    const random = seededRandom(SEED);
    for (let i = 0; i < CORPUS_SIZE; i++) heads.push(generateHead(random).bytes);
    const { disagreements, accepted, refused } = await compareAll(0, CORPUS_SIZE);
    if (process.env.SHOW_DISAGREEMENTS)
      (await import("node:fs")).writeFileSync(
        process.env.SHOW_DISAGREEMENTS,
        JSON.stringify(disagreements.map((d) => [d.head, d.probe.ok ? "ok" : d.probe.code, d.llhttp.ok ? "ok" : d.llhttp.code])),
      );
    expect(disagreements.slice(0, 5)).toEqual([]);
    // A corpus that only ever passes or only ever fails would prove nothing.
    expect(accepted).toBeGreaterThan(CORPUS_SIZE / 4);
    expect(refused).toBeGreaterThan(CORPUS_SIZE / 10);
  });

  it(`on ${FUZZ_SIZE} mutations of accepted heads (a bounded fuzz run)`, async () => {
    const random = seededRandom(SEED ^ 0xfeed);
    const from = heads.length;
    while (heads.length < from + FUZZ_SIZE) {
      const base = generateHead(random);
      if (base.endings !== "crlf") continue;
      heads.push(mutateHead(random, base.bytes));
    }
    const { disagreements } = await compareAll(from, heads.length);
    if (process.env.SHOW_DISAGREEMENTS)
      (await import("node:fs")).writeFileSync(
        `${process.env.SHOW_DISAGREEMENTS}.fuzz`,
        JSON.stringify(disagreements.map((d) => [d.head, d.probe.ok ? "ok" : d.probe.code, d.llhttp.ok ? "ok" : d.llhttp.code])),
      );
    expect(disagreements.slice(0, 5)).toEqual([]);
  });
});
