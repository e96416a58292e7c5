import { connect } from "node:net";
import { createProber } from "../../src/probe/prober.js";
import type { Figure } from "../results.js";
import type { BenchStack } from "../stack.js";
import { median } from "../stats.js";

/** Hops in flight at once, as the exchanges were first measured in isolation. */
const CONCURRENCY = 32;

/**
 * Scenario 8: what one probe request costs at the least, in this bench
 * process alone (no service, no caller's HTTP, no thread hand-off): the
 * prober's hop (screen, pin, tripwire, write, read the head, close) against a
 * bare `net` socket that writes the same request and looks for the end of
 * the head. Each is a fresh connection, as every hop of both tools is
 * (blackbox_exporter disables keep-alive). The bare socket is the floor a
 * Node probe cannot go under: the kernel's connect, write, read and close
 * and Node's socket; the difference is what the prober adds. Figures are CPU
 * (user + system) of this process per request, median of the rounds, with
 * the two alternating.
 */
export async function runProbeFloor(stack: BenchStack): Promise<Figure[]> {
  const count = stack.options.quick ? 4_000 : 20_000;
  const target = new URL(stack.target.url("/ok"));
  const prober = createProber({ allowCidrs: ["127.0.0.0/8"], dnsServers: [], userAgent: "sitediag-bench" });
  const hop = async () => {
    const outcome = await prober.hop({ url: target, method: "GET", timeoutMs: 6_000, ports: { kind: "fetch-safe" } });
    if (outcome.kind !== "response" || outcome.response.status !== 200)
      throw new Error(`scenario 8: the prober answered ${JSON.stringify(outcome)}`);
  };
  const bare = () => bareExchange(target);
  await measure(hop, 1_000);
  await measure(bare, 1_000);
  const rounds = { hop: [] as number[], bare: [] as number[] };
  for (let round = 0; round < stack.options.rounds; round++) {
    for (const side of round % 2 === 0 ? (["hop", "bare"] as const) : (["bare", "hop"] as const)) {
      rounds[side].push(await measure(side === "hop" ? hop : bare, count));
    }
  }
  await prober.close();
  return [
    {
      scenario: 8,
      name: "probe floor: CPU per request, prober hop / bare socket",
      unit: "us",
      sitediag: median(rounds.hop),
      // Not blackbox: the bare socket is the peer here, and the ratio column reads as prober / floor.
      blackbox: median(rounds.bare),
      rounds: { sitediag: rounds.hop, blackbox: rounds.bare },
    },
  ];
}

/** CPU microseconds of this process per call, `count` calls at CONCURRENCY at once. */
async function measure(call: () => Promise<void>, count: number): Promise<number> {
  let left = count;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await call();
    }),
  );
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / count;
}

function bareExchange(target: URL): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    let head = "";
    socket.once("connect", () => socket.write(`GET ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\nconnection: close\r\n\r\n`));
    socket.on("data", (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.destroy();
      resolve();
    });
    socket.once("error", reject);
  });
}
