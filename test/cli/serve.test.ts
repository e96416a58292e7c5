import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/run-cli.js";
import { runCli } from "../../src/cli/run-cli.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { createCliIo } from "../fixtures/cli-io.js";
import { until } from "../fixtures/until.js";

describe("sitediag serve", () => {
  let dir: string;
  let targets: HttpTargets;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-serve-"));
    targets = await startHttpTargets({
      routes: { "/up": { kind: "respond", status: 200 }, "/slow": { kind: "respond", status: 200, delayMs: 1_500 } },
    });
  });
  afterAll(async () => {
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function environment(name: string) {
    return { HOST: "127.0.0.1", PORT: "0", SITEDIAG_STORE: `sqlite:${join(dir, `${name}.db`)}`, SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8" };
  }

  it("serves with the store's first key, charges it, and stops cleanly on SIGTERM", async () => {
    const cli = createCliIo(environment("first"));
    const exited = runCli(["serve"], COMMANDS, cli.io);
    const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout())?.[1]);
    const key = await until(() => /^\s+(sd_\w+)$/m.exec(cli.stderr())?.[1]);

    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const anonymous = await fetch(`${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/up"))}`);
    expect(anonymous.status).toBe(401);
    const response = await fetch(`${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/up"))}`, {
      headers: { "x-api-key": key },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { status: string } }).data.status).toBe("up");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("298");

    cli.stop("SIGTERM");
    expect(await exited).toBe(0);
    expect(cli.listeners()).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it("has stopped accepting connections by the time its stop line is written", async () => {
    const cli = createCliIo(environment("refusing"));
    const service = { port: 0 };
    let atStopLine: string | undefined;
    const write = cli.io.stderr.write;
    cli.io.stderr.write = (text: string) => {
      // Asked synchronously, inside the write: a reader acting on the line the moment it appears sees this.
      if (text.includes("SIGTERM received")) atStopLine = connectsNow(service.port);
      return write(text);
    };
    const exited = runCli(["serve"], COMMANDS, cli.io);
    const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout())?.[1]);
    service.port = Number(new URL(url).port);
    expect(connectsNow(service.port)).toBe("connected");

    cli.stop("SIGTERM");
    expect(await exited).toBe(0);
    expect(atStopLine).toBe("refused");
  });

  it("stops at once on a second signal, with a request still in flight", async () => {
    const cli = createCliIo(environment("second"));
    const exited = runCli(["serve"], COMMANDS, cli.io);
    const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout())?.[1]);
    const key = await until(() => /^\s+(sd_\w+)$/m.exec(cli.stderr())?.[1]);
    const inFlight = fetch(`${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/slow"))}`, {
      headers: { "x-api-key": key },
    }).catch((error: unknown) => error);
    await until(() => (targets.requests.some((request) => request.target === "/slow") ? true : undefined));
    cli.stop("SIGTERM");
    cli.stop("SIGINT");
    expect(await exited).toBe(1);
    expect(cli.stderr()).toContain("SIGINT again, stopping now");
    // The in-flight call still completes: the grace period is running in the background.
    await inFlight;
  });

  it("refuses an unreadable SITEDIAG_CA_FILE with exit 2 naming the variable", async () => {
    const cli = createCliIo({ ...environment("ca"), SITEDIAG_CA_FILE: join(dir, "missing.pem") });
    expect(await runCli(["serve"], COMMANDS, cli.io)).toBe(2);
    expect(cli.stderr()).toContain("SITEDIAG_CA_FILE");
  });

  it("reports a port already in use with exit 1", async () => {
    const first = createCliIo(environment("busy"));
    const exited = runCli(["serve"], COMMANDS, first.io);
    const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(first.stdout())?.[1]);
    const second = createCliIo({ ...environment("busy2"), PORT: new URL(url).port });
    expect(await runCli(["serve"], COMMANDS, second.io)).toBe(1);
    expect(second.stderr()).toContain("cannot listen on 127.0.0.1:");
    first.stop();
    expect(await exited).toBe(0);
  });
});

/** Whether a TCP connection to the port succeeds now, asked from another process while this one's event loop waits. */
function connectsNow(port: number): "connected" | "refused" | string {
  const script = `const s=require("node:net").connect(${port},"127.0.0.1");s.on("connect",()=>{console.log("connected");s.destroy()});s.on("error",e=>console.log(e.code==="ECONNREFUSED"?"refused":e.code))`;
  return spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 30_000 }).stdout.trim();
}
