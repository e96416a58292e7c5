import { connect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import type { Answer } from "./http-client.js";

/**
 * A client for "N requests at once" that is not itself the bottleneck. A
 * general client (undici with N connections) spends the burst dialling N
 * sockets and then parsing N answers on one loop, so the last answers were
 * late because of the bench, for both tools alike. This one dials every
 * connection first (outside the measurement), writes every request in one
 * turn of its loop, each timed from its own write, and reads each answer with
 * nothing more than Content-Length: the figures belong to the tool measured.
 *
 * Plain HTTP/1.1 on loopback only, one request per connection, answers with
 * Content-Length (both tools send it).
 */
export async function burst(url: string, count: number, headers: Readonly<Record<string, string>> = {}): Promise<Answer[]> {
  const target = new URL(url);
  if (target.protocol !== "http:") throw new Error(`burst client speaks plain HTTP only, got ${url}`);
  const sockets = await Promise.all(Array.from({ length: count }, () => dial(target)));
  let head = `GET ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\nconnection: close\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  const request = Buffer.from(`${head}\r\n`, "latin1");
  const answers = sockets.map((socket) => answerOf(socket));
  for (const socket of sockets) {
    (socket as TimedSocket).sentAt = performance.now();
    socket.write(request);
  }
  return Promise.all(answers);
}

type TimedSocket = Socket & { sentAt?: number };

function dial(target: URL): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

function answerOf(socket: TimedSocket): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let wanted = -1;
    let bodyStart = -1;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      const elapsedMs = performance.now() - (socket.sentAt ?? performance.now());
      const all = Buffer.concat(chunks, received);
      socket.destroy();
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(all.toString("latin1", 0, 16))?.[1] ?? 0);
      resolve({ status, body: all.toString("utf8", bodyStart), elapsedMs });
    };
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (bodyStart === -1) {
        const all = Buffer.concat(chunks, received);
        const end = all.indexOf("\r\n\r\n");
        if (end === -1) return;
        bodyStart = end + 4;
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(all.toString("latin1", 0, end))?.[1];
        wanted = length === undefined ? -1 : Number(length);
      }
      if (wanted >= 0 && received - bodyStart >= wanted) done();
    });
    socket.once("end", () => (bodyStart === -1 ? reject(new Error("closed before an answer")) : done()));
    socket.once("error", reject);
  });
}
