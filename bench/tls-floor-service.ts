/**
 * The node:tls floor of an HTTPS check, as a service the bench drives like
 * sitediag: GET /check?url=https://127.0.0.1:PORT/PATH dials the target
 * afresh with one SecureContext built at start-up (Node's root store plus
 * the CA file in BENCH_FLOOR_CA_FILE), verifies its certificate, sends GET,
 * reads the head, follows a redirect on the same connection as sitediag
 * reuses one, and answers 200 with the final status (502 on any failure).
 * No policy, no timings, no certificate facts, no JSON envelope: what a
 * Node process cannot go under for the same work. Listens on 127.0.0.1 on
 * the port in BENCH_FLOOR_PORT and prints one line once listening.
 *
 * With BENCH_FLOOR_THREADS=1 the checks run on one worker thread (this same
 * file) and the HTTP server stays on the main thread, the calls and answers
 * crossing in batches as sitediag's bridge sends them: sitediag's split, with nothing of
 * sitediag's own work on either side. It tells what the split costs apart
 * from what sitediag does on each thread.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { connect, createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import { isMainThread, parentPort, Worker } from "node:worker_threads";
// The bridge's own batching, so the floor's messages cross exactly as sitediag's do.
import { answerHoldMs, type Batch, batchedSender, recentUtilization } from "../src/runner/thread-messages.js";

/** Built by the first check, on the thread that checks: in the two-thread mode the main thread holds no trust store. */
let context: SecureContext | undefined;
/** Redirects followed at most, as is-site-down's own cap. */
const MAX_REDIRECTS = 10;

interface Head {
  readonly status: number;
  readonly location: string | null;
  /** Body bytes to skip before the next request on the connection. */
  readonly length: number;
}

/** One fresh verified connection, then GETs on it until an answer that is no redirect. */
function check(target: URL): Promise<number> {
  return new Promise((resolve, reject) => {
    context ??= createSecureContext({ ca: [...rootCertificates, readFileSync(process.env.BENCH_FLOOR_CA_FILE ?? "", "utf8")] });
    const socket = connect({ host: target.hostname, port: Number(target.port), secureContext: context });
    let buffered = Buffer.alloc(0);
    let pending: Head | null = null;
    let redirects = 0;
    const send = (path: string) => socket.write(`GET ${path} HTTP/1.1\r\nhost: ${target.host}\r\naccept: */*\r\n\r\n`);
    const done = (error: Error | null, status = 0) => {
      socket.destroy();
      if (error === null) resolve(status);
      else reject(error);
    };
    socket.once("secureConnect", () => send(target.pathname));
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (pending === null) {
          const end = buffered.indexOf("\r\n\r\n");
          if (end < 0) return;
          pending = headOf(buffered.subarray(0, end).toString("latin1"));
          buffered = buffered.subarray(end + 4);
        }
        if (buffered.length < pending.length) return;
        buffered = buffered.subarray(pending.length);
        const head: Head = pending;
        pending = null;
        if (head.status < 300 || head.status > 399 || head.location === null || ++redirects > MAX_REDIRECTS) return done(null, head.status);
        send(new URL(head.location, target).pathname);
      }
    });
    socket.once("error", (error) => done(error));
    socket.once("end", () => done(new Error("closed before the answer")));
  });
}

function headOf(text: string): Head {
  const lines = text.split("\r\n");
  const status = Number(lines[0]?.split(" ")[1]);
  let location: string | null = null;
  let length = 0;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "location") location = value;
    if (name === "content-length") length = Number(value);
  }
  return { status, location, length };
}

/** A call and its answer as they cross between the threads: the call's number and its URL, or its number and final status (0: failed). */
type Crossing = readonly [number, string | number];

/** Runs checks on a worker thread: answers how the check ended, or 0 for a failure. */
function checksOnThread(): (url: string) => Promise<number> {
  const worker = new Worker(new URL(import.meta.url));
  const waiting = new Map<number, (status: number) => void>();
  let next = 0;
  worker.on("message", (batch: Batch<Crossing>) => {
    for (const [id, status] of batch) {
      waiting.get(id)?.(Number(status));
      waiting.delete(id);
    }
  });
  const post = batchedSender<Crossing>((batch) => worker.postMessage(batch));
  return (url) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      post([id, url]);
    });
}

/** A check on this thread; a URL that does not parse fails like any other check (0), never throws. */
const checkHere = (url: string): Promise<number> =>
  Promise.resolve(url)
    .then((text) => check(new URL(text)))
    .catch(() => 0);

if (isMainThread) {
  const run = process.env.BENCH_FLOOR_THREADS === "1" ? checksOnThread() : checkHere;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://floor").searchParams.get("url");
    if (url === null) return void response.writeHead(400).end();
    void run(url).then((status) =>
      status === 0
        ? response.writeHead(502).end()
        : response.writeHead(200, { "content-type": "application/json" }).end(`{"status":${status}}`),
    );
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.BENCH_FLOOR_PORT), "127.0.0.1", () => process.stdout.write("listening\n"));
} else {
  const port = parentPort;
  if (port === null) throw new Error("the floor's check thread runs only as a worker thread");
  // Answers held as sitediag's probe thread holds them: while the thread is busy with other checks in flight.
  let inFlight = 0;
  const utilization = recentUtilization(50);
  const post = batchedSender<Crossing>((batch) => port.postMessage(batch), { holdMs: () => answerHoldMs(inFlight, utilization()) });
  port.on("message", (batch: Batch<Crossing>) => {
    for (const [id, url] of batch) {
      inFlight++;
      void checkHere(String(url)).then((status) => {
        post([id, status]);
        inFlight--;
      });
    }
  });
}
