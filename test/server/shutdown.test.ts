import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { until } from "../fixtures/until.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

describe("graceful shutdown of a real `sitediag serve` process", () => {
  let dir: string;
  let targets: HttpTargets;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-shutdown-"));
    targets = await startHttpTargets({ routes: { "/slow": { kind: "respond", status: 200, delayMs: 1_000 } } });
  });
  afterAll(async () => {
    if (child?.exitCode === null) child.kill("SIGKILL");
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("on SIGTERM refuses new connections, finishes the check in flight with 200, and exits 0", async () => {
    const process_ = spawn(process.execPath, sitediagArgs("serve"), {
      cwd: join(import.meta.dirname, "../.."),
      env: {
        PATH: process.env.PATH,
        HOST: "127.0.0.1",
        PORT: "0",
        SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}`,
        SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = process_;
    let stdout = "";
    let stderr = "";
    process_.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    process_.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => process_.once("exit", (code) => resolve(code)));

    const url = await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1]);
    const key = await until(() => /^\s+(sd_\w+)$/m.exec(stderr)?.[1]);
    const port = Number(new URL(url).port);

    const inFlight = fetch(`${url}/api/v1/is-site-down?url=${encodeURIComponent(targets.url("/slow"))}`, { headers: { "x-api-key": key } });
    await until(() => (targets.requests.some((request) => request.target === "/slow") ? true : undefined));
    process_.kill("SIGTERM");
    await until(() => (stderr.includes("SIGTERM received") ? true : undefined));
    expect(await connects(port)).toBe(false);

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { status: string } }).data.status).toBe("up");
    expect(await exited).toBe(0);
    expect(stderr).toContain("stopped");

    // The JSON log has the call, and the key, printed once for the person on stderr, appears nowhere in it.
    const logLines = stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logLines.some((line) => line.msg === "request" && line.operation === "CheckSite" && line.status === 200)).toBe(true);
    expect(stderr.split(key).length - 1).toBe(2); // the key line and the curl example, nothing else
    expect(stdout).not.toContain(key);
  }, 60_000);
});
