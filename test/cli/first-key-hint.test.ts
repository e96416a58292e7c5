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
import { type ServeProcess, startServeProcess } from "../load/service-process.js";

const ROOT = join(import.meta.dirname, "..", "..");

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

  it("names a keys command that, pasted into a shell where serve was started, creates a key", async () => {
    const hint = /^More keys: (.+) keys create {3}\(list: \1 keys list, revoke: \1 keys revoke ID\)$/m.exec(service.stderr());
    expect(hint, service.stderr()).not.toBeNull();
    const cli = hint?.[1] ?? "";
    expect(cli).not.toBe("sitediag");
    const created = await promisify(execFile)("/bin/sh", ["-c", `${cli} keys create`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}` },
    });
    expect(created.stdout).toMatch(/^sd_\w+\n$/);
    expect(created.stderr).toMatch(/^created key_[0-9a-f]{16} \("key \d{4}-/);
  });
});
