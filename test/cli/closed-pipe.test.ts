/**
 * `sitediag ... | head -3`: the reader closes stdout early. Each command that
 * writes a lot runs as its own process (a real pipe, as a shell makes it);
 * the reader leaves before or after the first line, and the command must end
 * as Unix tools do: nothing on stderr, exit 141 (128 + SIGPIPE).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueKey } from "../../src/access/issue-key.js";
import { openStore } from "../../src/access/open-store.js";
import { EXIT_READER_GONE } from "../../src/cli/run-cli.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

describe("a reader that closes stdout early", () => {
  let dir: string;
  let targets: HttpTargets;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-pipe-"));
    targets = await startHttpTargets({
      routes: { "/up": { kind: "respond", status: 200, body: "fine" }, "/old": { kind: "redirect", status: 301, location: "/up" } },
    });
    env = {
      PATH: process.env.PATH ?? "",
      SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
      SITEDIAG_TRACE_PORTS: String(targets.httpPort),
      SITEDIAG_STORE: `sqlite:${join(dir, "keys.db")}`,
    };
    const store = await openStore({ kind: "sqlite", path: join(dir, "keys.db") });
    for (let index = 0; index < 50; index++) await issueKey(store, `key number ${index}`);
    await store.close();
  });

  afterAll(async () => {
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `sitediag argv` with `stdin`; the reader takes `lines` lines of stdout (0: none) and closes the pipe. */
  async function readThenClose(argv: readonly string[], lines: number, stdin = "") {
    const child = spawn(process.execPath, sitediagArgs(...argv), { env, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");
    child.stdin.end(stdin);
    let read = "";
    if (lines === 0) child.stdout.destroy();
    else {
      child.stdout.on("data", (chunk: Buffer) => {
        read += chunk.toString();
        if (read.split("\n").length > lines) child.stdout.destroy();
      });
    }
    const [code, signal] = (await exited) as [number | null, string | null];
    return { code, signal, stderr, read };
  }

  it.each([
    ["check", () => ["check", targets.url("/old")]],
    ["trace", () => ["trace", targets.url("/old")]],
    ["keys list", () => ["keys", "list"]],
  ])("%s: closed before the first line, it exits 141 and says nothing", async (_, argv) => {
    const run = await readThenClose(argv(), 0);
    expect(run.stderr).toBe("");
    expect(run).toMatchObject({ code: EXIT_READER_GONE, signal: null });
  });

  it("trace --batch --json: the reader takes 3 lines of 60 and leaves; the rest is not written, and nothing said", async () => {
    const rows = Array.from({ length: 60 }, (_, index) => `${targets.url(`/old?row=${index}`)},${targets.url("/up")}`).join("\n");
    const run = await readThenClose(["trace", "--batch", "-", "--json"], 3, rows);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(EXIT_READER_GONE);
    expect(run.read.split("\n").length).toBeGreaterThan(3);
  });
});
