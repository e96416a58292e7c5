import { createServer } from "node:net";

/**
 * Loopback ports for tests, drawn below Linux's ephemeral range (32768-60999 by default), where the kernel
 * never hands out a port on its own: a port chosen here cannot be taken by an outgoing connection or a
 * `listen(0)` elsewhere between our check and its use (a CI line once saw a page test's "closed" IPv4 side
 * answer 404 from a server the kernel had put there).
 *
 * Two ranges, so that a port one file counts on staying closed is never one another file binds a server
 * to: a Redis started beside a test that expected "refused" on the same port answered it instead.
 * - CLOSED (10000-12999): ports let go at once, for targets that refuse connections. Nothing listens there
 *   but the served side of a family pair whose other family is the closed one (test/fixtures/family-targets.ts).
 * - SERVED (13000-22767): ports a fixture binds and keeps (Redis takes no port 0); a Redis Cluster node binds
 *   its bus at port + 10000, at most 32767, still below the ephemeral range.
 */
const CLOSED = { first: 10_000, last: 12_999 } as const;
const SERVED = { first: 13_000, last: 22_767 } as const;

/**
 * A loopback port nothing listens on, for a target that refuses connections. Still a race with another
 * caller of this one across 3,000 ports: one that binds nothing, so two such callers sharing a port both
 * still hear "refused".
 */
export function closedLoopbackPort(host = "127.0.0.1"): Promise<number> {
  return freePort(CLOSED, [], host);
}

/**
 * A free loopback port for a server to keep, with `port + offset` free too for each offset asked (a Redis
 * Cluster node's bus), on `host`. Another copy of the suite may pick the same one at the same moment: a
 * caller that sees its server fail to bind picks again.
 */
export function quietLoopbackPort(offsets: readonly number[] = [], host = "127.0.0.1"): Promise<number> {
  return freePort(SERVED, offsets, host);
}

async function freePort(range: { first: number; last: number }, offsets: readonly number[], host: string): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = range.first + Math.floor(Math.random() * (range.last - range.first + 1));
    if (await everyBindable([port, ...offsets.map((offset) => port + offset)], host)) return port;
  }
  throw new Error(`no free ${host} port in ${range.first}-${range.last} after 200 tries`);
}

async function everyBindable(ports: readonly number[], host: string): Promise<boolean> {
  for (const port of ports) if (!(await bindable(port, host))) return false;
  return true;
}

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
