/**
 * The start-up hint names a command that works as printed, where it was
 * printed: a clone has no `sitediag` on PATH, so the hint names how this very
 * serve process was started. Run here exactly as printed, in a shell.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/access/open-store.js";
import { type RedisServerFixture, redisAvailability, startRedisServer } from "../../testkit/redis-server.js";
import { type ServeProcess, startServeProcess } from "../fixtures/service-process.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** The hint's store and command: `More keys, in this same store: SITEDIAG_STORE='...' CLI keys create   (...)`. */
const HINT =
  /^More keys, in this same store: (SITEDIAG_STORE='[^']+') (.+) keys create {3}\(list: keys list, revoke: keys revoke ID, with the same SITEDIAG_STORE\)$/m;

/** The hint's command, run as printed in a shell that has no SITEDIAG_STORE of its own. */
async function runHinted(stderr: string): Promise<{ stdout: string; stderr: string }> {
  const hint = HINT.exec(stderr);
  expect(hint, stderr).not.toBeNull();
  expect(hint?.[2]).not.toBe("sitediag");
  return promisify(execFile)("/bin/sh", ["-c", `${hint?.[1] ?? ""} ${hint?.[2] ?? ""} keys create`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "" },
  });
}

describe("the first key's hint", () => {
  let dir: string;
  let service: ServeProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-hint-"));
    service = await startServeProcess({ SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}` }, true);
  });

  afterAll(async () => {
    service?.child.kill("SIGTERM");
    await service?.exited();
    rmSync(dir, { recursive: true, force: true });
  });

  it("names the store and a keys command that, pasted into any shell, creates a key in it", async () => {
    expect(service.stderr()).toContain(`this store (the SQLite file ${join(dir, "keys.db")}) had no API keys`);
    const created = await runHinted(service.stderr());
    expect(created.stdout).toMatch(/^sd_\w+\n$/);
    expect(created.stderr).toMatch(/^created key_[0-9a-f]{16} \("key \d{4}-/);
    const store = await openStore({ kind: "sqlite", path: join(dir, "keys.db") });
    try {
      expect(await store.countKeys()).toBe(2);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!redisAvailability().available)("the first key's hint on a Redis store", () => {
  let redis: RedisServerFixture;
  let service: ServeProcess;

  beforeAll(async () => {
    redis = await startRedisServer();
    service = await startServeProcess({ SITEDIAG_STORE: redis.url() }, true);
  });

  afterAll(async () => {
    service?.child.kill("SIGTERM");
    await service?.exited();
    await redis?.close();
  });

  it("names the Redis, and its command creates the key there, not in a local SQLite file the service never reads", async () => {
    expect(service.stderr()).toContain(`this store (Redis at ${redis.url()}) had no API keys`);
    const created = await runHinted(service.stderr());
    expect(created.stdout).toMatch(/^sd_\w+\n$/);
    const store = await openStore({ kind: "redis", url: redis.url() });
    try {
      expect(await store.countKeys()).toBe(2);
    } finally {
      await store.close();
    }
  });
});
