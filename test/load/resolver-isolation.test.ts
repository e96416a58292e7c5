import { execFileSync } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeProcess, startServeProcess } from "../fixtures/service-process.js";

/**
 * The default resolver (no SITEDIAG_DNS_SERVERS), end to end: `serve` runs in
 * its own mount namespace whose /etc/resolv.conf names a loopback server that
 * never answers, and whose /etc/hosts lists one test name. With getaddrinfo,
 * eight checks of silent names took all four threads of libuv's pool and an
 * unrelated hosts-file name then timed out behind them.
 */
/**
 * resolv.conf names no port, so the silent server needs port 53 of some
 * loopback address: one free on this machine, since another copy of the
 * suite (or anything else) may hold 53 on the first one tried.
 */
const SILENT_CANDIDATES = Array.from({ length: 16 }, (_, i) => `127.0.${77 + i}.77`);
const namespacesWork = (() => {
  try {
    execFileSync("unshare", ["--mount", "--propagation", "private", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
if (!namespacesWork && process.env.CI !== undefined) throw new Error("CI must be able to run unshare --mount (run as root)");

describe.skipIf(!namespacesWork)("default resolver in a mount namespace (skipped: unshare --mount needs root)", () => {
  let dir: string;
  let silent: Socket;
  let silentServer: string;
  let queries = 0;
  let targets: HttpTargets;
  let service: ServeProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-resolver-"));
    [silent, silentServer] = await bindSilentServer();
    silent.on("message", () => (queries += 1)); // read, never answered
    targets = await startHttpTargets({ routes: { "/up": { kind: "respond", status: 200 } } });
    const resolvConf = join(dir, "resolv.conf");
    const hosts = join(dir, "hosts");
    writeFileSync(resolvConf, `nameserver ${silentServer}\n`);
    writeFileSync(hosts, "127.0.0.1 localhost hosts-only.test\n");
    const mounts = `mount --bind ${resolvConf} /etc/resolv.conf && mount --bind ${hosts} /etc/hosts && exec "$0" "$@"`;
    service = await startServeProcess({ SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}`, SITEDIAG_SITE_TIMEOUT_MS: "5000" }, true, [
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      mounts,
    ]);
  }, 30_000);

  afterAll(async () => {
    service?.child.kill("SIGKILL");
    await service?.exited();
    await targets?.close();
    silent?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("checks a hosts-file name at once while eight checks wait on a name server that never answers", async () => {
    const check = (url: string) =>
      fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(url)}`, { headers: { "x-api-key": service.firstKey ?? "" } }).then(
        async (response) => (await response.json()) as { data: { status: string; failedStage: string | null } },
      );
    const waiting = Array.from({ length: 8 }, (_, i) => check(`http://silent-${i}.test/`));
    const deadline = Date.now() + 5_000;
    while (queries < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(queries).toBeGreaterThanOrEqual(8);

    const started = performance.now();
    const listed = await check(`http://hosts-only.test:${new URL(targets.url("/up")).port}/up`);
    expect(listed.data.status).toBe("up");
    expect(performance.now() - started).toBeLessThan(1_500);

    for (const result of await Promise.all(waiting)) expect(result.data).toMatchObject({ status: "down", failedStage: "dns" });
  });
});

/** A UDP socket on port 53 of the first candidate address that is free. */
async function bindSilentServer(): Promise<[Socket, string]> {
  let lastError: unknown;
  for (const address of SILENT_CANDIDATES) {
    const socket = createSocket("udp4");
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once("error", reject);
        socket.bind(53, address, () => {
          socket.off("error", reject);
          resolve();
        });
      });
      return [socket, address];
    } catch (error) {
      socket.close();
      lastError = error;
    }
  }
  throw lastError;
}
