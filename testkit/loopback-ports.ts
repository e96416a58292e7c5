import { createServer } from "node:net";

/**
 * A loopback port nothing listens on, for a target that refuses connections.
 * Chosen below the ephemeral range (quietLoopbackPort): a port the kernel chose
 * and this released went back to the pool every `listen(0)` draws from, and a
 * test file running beside it could start a server there, which then answered
 * for the "closed" port (a CI line saw a page test's refused IPv4 side answer
 * 404). Still a race with another caller of these two, across 12,768 ports.
 */
export function closedLoopbackPort(host = "127.0.0.1"): Promise<number> {
  return quietLoopbackPort([], host);
}

/**
 * Below Linux's ephemeral range (32768-60999 by default), where the kernel
 * never hands out a port on its own: a port chosen here cannot be taken by an
 * outgoing connection or a `listen(0)` elsewhere between our check and the
 * server binding it. Redis needs this: it takes no port 0, and a Cluster node
 * also binds its bus at port + 10000, which must be outside that range too.
 */
const QUIET_FIRST = 10_000;
const QUIET_LAST = 22_767;

/**
 * A free loopback port below the ephemeral range, with `port + offset` free
 * too for each offset asked (a Redis Cluster node's bus), on `host`. Another
 * copy of the suite may pick the same one at the same moment: a caller that
 * sees its server fail to bind picks again.
 */
export async function quietLoopbackPort(offsets: readonly number[] = [], host = "127.0.0.1"): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = QUIET_FIRST + Math.floor(Math.random() * (QUIET_LAST - QUIET_FIRST + 1));
    if (await everyBindable([port, ...offsets.map((offset) => port + offset)], host)) return port;
  }
  throw new Error(`no free ${host} port in ${QUIET_FIRST}-${QUIET_LAST} after 200 tries`);
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
