import { once } from "node:events";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { closedLoopbackPort, quietLoopbackPort } from "../../testkit/loopback-ports.js";

/** Ephemeral ports begin here on Linux by default: nothing of ours may reach them. */
const EPHEMERAL_FIRST = 32_768;
const DRAWS = 200;

async function draws(draw: () => Promise<number>): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < DRAWS; i++) ports.push(await draw());
  return ports;
}

describe("loopback ports for tests", () => {
  it("never hands a port meant to refuse from the range servers keep, nor the other way round", async () => {
    // One range for both let a Redis bind the port another file was counting on to refuse.
    const closed = await draws(() => closedLoopbackPort());
    const served = await draws(() => quietLoopbackPort([10_000]));
    const highestClosed = Math.max(...closed);
    expect(Math.min(...closed)).toBeGreaterThanOrEqual(10_000);
    expect(highestClosed).toBeLessThan(Math.min(...served));
    // A Redis Cluster node's bus, at port + 10000, stays below the ephemeral range too.
    expect(Math.max(...served) + 10_000).toBeLessThan(EPHEMERAL_FIRST);
  });

  it("a closed port refuses a connection", async () => {
    const socket = connect(await closedLoopbackPort(), "127.0.0.1");
    const [error] = (await once(socket, "error")) as [NodeJS.ErrnoException];
    expect(error.code).toBe("ECONNREFUSED");
  });
});
