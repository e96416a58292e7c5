import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService } from "../fixtures/service-harness.js";

describe("the REST door at the end of the shutdown grace period", () => {
  let silent: net.Server;
  let port: number;
  const accepted: { closedAt: number | null }[] = [];
  beforeAll(async () => {
    // Accepts, reads, never answers: a check of it runs until its 6 s timeout unless cancelled.
    silent = net.createServer((socket) => {
      const entry: { closedAt: number | null } = { closedAt: null };
      accepted.push(entry);
      socket.resume();
      socket.on("error", () => undefined);
      socket.on("close", () => (entry.closedAt = Date.now()));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    port = (silent.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => silent.close(resolve));
  });

  it("cancels the diagnostic still running, which lets go of its target at once", async () => {
    const service = await startTestService({ shutdownGraceMs: 300 });
    const call = fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(`http://127.0.0.1:${port}/`)}`).then(
      (response) => response.status,
      () => "cut",
    );
    const deadline = Date.now() + 5_000;
    while (accepted.length === 0 && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 10));
    expect(accepted).toHaveLength(1);
    const closing = Date.now();
    await service.close();
    expect(await call).toBe("cut");
    while (accepted[0]?.closedAt === null && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 10));
    const released = (accepted[0]?.closedAt ?? Number.POSITIVE_INFINITY) - closing;
    // The grace period is 300 ms; the check's own timeout (6 s) must not be what ends it.
    expect(released).toBeLessThan(3_000);
  });
});
