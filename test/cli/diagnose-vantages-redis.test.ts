import { type ChildProcess, execFile } from "node:child_process";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { checkCommand } from "../../src/cli/check.js";
import { redisAvailability, startRedisServer } from "../../testkit/redis-server.js";
import { closedLoopbackPort } from "../../testkit/loopback-ports.js";
import { runDiagnose } from "../fixtures/cli-io.js";
import { eventually } from "../fixtures/vantage-rig.js";
import { startThreeVantages, type ThreeVantages, VANTAGE_NAMES } from "../fixtures/three-vantages.js";
import { sitediagArgs } from "../fixtures/built-sitediag.js";

// `sitediag check --vantages` / `trace --vantages` as a process, with
// SITEDIAG_STORE naming the Redis of a three-vantage deployment (three real
// serve processes, each with its own DNS server): the command asks the
// deployment's vantages, and leaves no trace of itself in the Redis.

const ROOT = join(import.meta.dirname, "../..");
const availability = redisAvailability();

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `sitediag ARGS` as a child process, with a bare environment plus `env`; `started` is handed the child. */
function sitediag(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  started?: (child: ChildProcess) => void,
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      sitediagArgs(...args),
      { cwd: ROOT, env: { PATH: process.env.PATH ?? "", SITEDIAG_HOSTS_FILE: "/dev/null", SITEDIAG_PROBE_THREADS: "0", ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
    started?.(child);
  });
}

/** What a worker leaves in Redis and an asker must not touch: the consumers of every vantage's group, the heartbeats, and every key. */
async function footprint(admin: Redis): Promise<{ consumers: Record<string, string[]>; heartbeats: string[]; keys: string[] }> {
  const consumers: Record<string, string[]> = {};
  for (const name of VANTAGE_NAMES) {
    const rows = (await admin.call("XINFO", "CONSUMERS", `{sitediag:v:${name}}:jobs`, "workers")) as unknown[][];
    consumers[name] = rows.map((row) => String(row[1])).sort();
  }
  const heartbeats = (await admin.zrange("{sitediag:vantages}:seen", 0, -1)).sort();
  const keys = (await admin.keys("*")).sort();
  return { consumers, heartbeats, keys };
}

type Footprint = Awaited<ReturnType<typeof footprint>>;

/**
 * The same heartbeats and keys after the command as before it, and in each
 * group no consumer but its vantage's serve (named by the instance id its
 * heartbeat carries; a group gets its consumer with its first job).
 */
function expectNoTraceOfTheCommand(before: Footprint, after: Footprint): void {
  expect(after.heartbeats).toEqual(before.heartbeats);
  expect(after.keys).toEqual(before.keys);
  const workers = new Map(
    after.heartbeats
      .map((member) => JSON.parse(member) as [string, unknown, unknown, string])
      .map(([name, , , instance]) => [name, instance]),
  );
  for (const [name, consumers] of Object.entries(after.consumers))
    for (const consumer of consumers) expect(consumer).toBe(workers.get(name));
}

describe.skipIf(!availability.available)("sitediag --vantages on a Redis store, as a process", () => {
  let targets: HttpTargets;
  let rig: ThreeVantages;
  let admin: Redis;

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 }, "/held": { kind: "hang" } } });
    rig = await startThreeVantages(targets.httpPort);
    // frozen.test: the targets in eu-west and us-east; ap-south's resolver never answers, so its job is in hand when it is frozen.
    for (const [name, server] of rig.dns) server.answer("frozen.test", name === "ap-south" ? "never" : { a: ["127.0.0.1"] });
    admin = new Redis(rig.redis.url());
  }, 90_000);

  /** SIGCONT, and live again (a beat within the last 2 s) before the next test asks `all`. */
  async function thaw(name: string): Promise<void> {
    rig.serves.get(name)?.child.kill("SIGCONT");
    await eventually(async () => {
      const scores = (await admin.zrange("{sitediag:vantages}:seen", 0, -1, "WITHSCORES")).filter(
        (_, index, all) => index % 2 === 1 && (all[index - 1] ?? "").startsWith(`["${name}"`),
      );
      return scores.some((score) => Number(score) > Date.now() - 2_000) ? true : undefined;
    });
  }

  afterAll(async () => {
    admin?.disconnect();
    await rig?.close();
    await targets?.close();
  });

  it("check --vantages all: a row per live vantage, down_in_some, exit 1; the command joins no group, beats no heartbeat and leaves no key", async () => {
    const before = await footprint(admin);
    expect(before.heartbeats).toHaveLength(3);
    const url = targets.url("/ok", { hostname: "site.test" });
    const { code, stdout, stderr } = await sitediag(["check", "--vantages", "all", url], {
      SITEDIAG_STORE: rig.redis.url(),
      SITEDIAG_VANTAGE: "eu-west",
    });
    expect(stderr).toBe("");
    expect(code).toBe(1);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^VANTAGE\s+STATE\s+ANSWER\s+STATUS\s+TIME\s+CODE\s+REASON$/);
    // The rows in the order the regions answered.
    const rows = lines.slice(1, 4).sort();
    expect(rows[0]).toMatch(/^ap-south\s+done\s+DOWN\s+-\s+\d+ ms\s+dns_no_such_host\s+DNS lookup failed/);
    expect(rows[1]).toMatch(/^eu-west\s+done\s+UP\s+200\s+\d+ ms$/);
    expect(rows[2]).toMatch(/^us-east\s+done\s+UP\s+200\s+\d+ ms$/);
    // Then what differs: the addresses each region resolved, and from which resolver.
    expect(lines[4]).toMatch(/^differs: addresses \(ap-south NXDOMAIN; eu-west, us-east 127\.0\.0\.1\), resolver \(/);
    expect(lines[5]).toBe(`down_in_some  ${url}  (3 vantages: 3 done)`);
    expect(lines).toHaveLength(6);
    expectNoTraceOfTheCommand(before, await footprint(admin));
  }, 60_000);

  it("a region frozen mid-check: the live regions' rows come as they answer, well before its deadline ends the table (timed on the command's own stdout)", async () => {
    const url = targets.url("/ok", { hostname: "frozen.test" });
    const resolver = rig.dns.get("ap-south");
    const asked = () => (resolver?.queries ?? []).filter((query) => query.name === "frozen.test").length;
    const before = asked();
    const lines: { readonly text: string; readonly at: number }[] = [];
    let partial = "";
    // The command's own deadline is 5 x 2 s + 2 s (vantage-run.ts): the rows must not wait for it.
    const running = sitediag(
      ["check", "--vantages", "all", url],
      { SITEDIAG_STORE: rig.redis.url(), SITEDIAG_SITE_TIMEOUT_MS: "2000" },
      (child) =>
        child.stdout?.on("data", (chunk: Buffer) => {
          const parts = (partial + chunk.toString("utf8")).split("\n");
          partial = parts.pop() ?? "";
          for (const text of parts) lines.push({ text, at: Date.now() });
        }),
    );
    let run: CliRun;
    try {
      // ap-south has taken its job (its resolver has the question, which it never answers): frozen now, nobody answers it.
      await eventually(() => Promise.resolve(asked() > before ? true : undefined), 30_000);
      rig.serves.get("ap-south")?.child.kill("SIGSTOP");
      run = await running;
    } finally {
      await thaw("ap-south");
    }
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    // On a pipe: lines only, no redrawn waiting line.
    expect(run.stdout.includes("\u001b") || run.stdout.includes("\r")).toBe(false);
    const row = (name: string) => lines.find((line) => line.text.startsWith(`${name} `));
    expect(row("eu-west")?.text).toMatch(/^eu-west\s+done\s+UP\s+200\s+\d+ ms$/);
    expect(row("us-east")?.text).toMatch(/^us-east\s+done\s+UP\s+200\s+\d+ ms$/);
    expect(row("ap-south")?.text).toMatch(
      /^ap-south\s+unavailable\s+-\s+-\s+\d+ ms\s+deadline\s+This vantage did not answer by the deadline/,
    );
    const last = lines.at(-1);
    expect(last?.text).toBe(`up_where_answered  ${url}  (3 vantages: 1 unavailable, 2 done; not seen from ap-south)`);
    // The deadline as the command measured it (ap-south's time), never assumed; the live rows came at least half of it before the end.
    const deadlineMs = Number(/\s(\d+) ms\s/.exec(row("ap-south")?.text ?? "")?.[1]);
    expect(deadlineMs).toBeGreaterThan(0);
    const liveRowsAt = Math.max(row("eu-west")?.at ?? Number.POSITIVE_INFINITY, row("us-east")?.at ?? Number.POSITIVE_INFINITY);
    expect((last?.at ?? 0) - liveRowsAt).toBeGreaterThanOrEqual(deadlineMs / 2);
  }, 90_000);

  it("check --vantages all --json: the API's data object, an entry per vantage", async () => {
    const url = targets.url("/ok", { hostname: "site.test" });
    const { code, stdout } = await sitediag(["check", "--json", "--vantages", "all", url], { SITEDIAG_STORE: rig.redis.url() });
    expect(code).toBe(1);
    const data = JSON.parse(stdout) as { vantages: { verdict: string; entries: { vantage: { name: string; state: string } }[] } };
    expect(data.vantages.verdict).toBe("down_in_some");
    expect(data.vantages.entries.map((entry) => [entry.vantage.name, entry.vantage.state])).toEqual(
      VANTAGE_NAMES.map((name) => [name, "done"]),
    );
  }, 60_000);

  it("trace --vantages eu-west,us-east: the two asked, and the challenge us-east sees makes it blocked_in_some, exit 1", async () => {
    const before = await footprint(admin);
    const url = targets.url("/ok", { hostname: "gate.test" });
    const { code, stdout, stderr } = await sitediag(["trace", "--vantages", "eu-west,us-east", url], { SITEDIAG_STORE: rig.redis.url() });
    expect(stderr).toBe("");
    expect(code).toBe(1);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^VANTAGE/);
    const rows = lines.slice(1, 3).sort();
    expect(rows[0]).toMatch(/^eu-west\s+done\s+UP\s+200\s+\d+ ms$/);
    // The challenge in the words a single trace uses: CHALLENGED and Cloudflare's sentence, never a bare status.
    expect(rows[1]).toMatch(
      /^us-east\s+done\s+CHALLENGED\s+403\s+\d+ ms\s+final_status_error\s+Reachable, but a Cloudflare challenge answered/,
    );
    expect(lines[3]).toMatch(
      /^differs: addresses \(eu-west 127\.0\.0\.1; us-east 127\.0\.0\.2\), resolver \(.*\), status \(eu-west 200; us-east 403\)/,
    );
    expect(lines[4]).toBe(`blocked_in_some  ${url}  (2 vantages: 2 done)`);
    expect(lines).toHaveLength(5);
    expectNoTraceOfTheCommand(before, await footprint(admin));
  }, 60_000);

  it("a Redis that cannot be reached: a clear error on stderr, nothing on stdout, exit 2", async () => {
    const closedPort = await closedLoopbackPort();
    const { code, stdout, stderr } = await sitediag(["check", "--vantages", "all", "http://site.test/"], {
      SITEDIAG_STORE: `redis://127.0.0.1:${closedPort}`,
    });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^sitediag: --vantages: cannot reach the Redis of SITEDIAG_STORE \(.*ECONNREFUSED.*\); nothing was sent to any vantage\n$/,
    );
  }, 60_000);

  it("all on a Redis where no serve is live: says so on stderr, prints no table, exit 1 (the verdict unavailable)", async () => {
    const empty = await startRedisServer();
    try {
      const { code, stdout, stderr } = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/ok")], {
        SITEDIAG_STORE: empty.url(),
      });
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toBe(
        "sitediag: --vantages all: no vantage has a live instance (no serve's heartbeat in the Redis of SITEDIAG_STORE); nothing was checked\n",
      );
      const json = await runDiagnose(checkCommand, ["--json", "--vantages", "all", targets.url("/ok")], { SITEDIAG_STORE: empty.url() });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toEqual({
        requestedUrl: targets.url("/ok"),
        vantages: { verdict: "unavailable", entries: [], differences: null },
      });
    } finally {
      await empty.close();
    }
  }, 30_000);

  it("a Redis user that may connect but not read the vantages: the refusal on stderr, exit 2, not a crash", async () => {
    const locked = await startRedisServer();
    const setup = new Redis(locked.url());
    try {
      await setup.call("ACL", "SETUSER", "looker", "on", ">pw", "~*", "-@all", "+@connection", "+info");
      const url = new URL(locked.url());
      url.username = "looker";
      url.password = "pw";
      const { code, stdout, stderr } = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/ok")], {
        SITEDIAG_STORE: url.href,
      });
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(/^sitediag: --vantages: the Redis of SITEDIAG_STORE failed: NOPERM.*; nothing was checked\n$/);
    } finally {
      setup.disconnect();
      await locked.close();
    }
  }, 30_000);

  // Last: the jobs it leaves running are answered after it has gone, to a reply key that then expires.
  it("while it waits for the vantages it is no worker (no heartbeat, no consumer), and a stop signal ends it, exit 130", async () => {
    const before = await footprint(admin);
    const url = targets.url("/held", { hostname: "site.test" });
    const seen = targets.requests.length;
    let child: ChildProcess | undefined;
    const running = sitediag(
      ["check", "--vantages", "all", url],
      { SITEDIAG_STORE: rig.redis.url(), SITEDIAG_VANTAGE: "eu-west" },
      (started) => (child = started),
    );
    // eu-west and us-east resolve the name and hold a request at the target: the command is past its start, asking.
    await eventually(() =>
      Promise.resolve(targets.requests.slice(seen).filter((request) => request.target === "/held").length >= 2 ? true : undefined),
    );
    const during = await footprint(admin);
    expect(during.heartbeats).toEqual(before.heartbeats);
    const workers = new Map(
      during.heartbeats
        .map((member) => JSON.parse(member) as [string, unknown, unknown, string])
        .map(([name, , , instance]) => [name, instance]),
    );
    for (const [name, consumers] of Object.entries(during.consumers))
      for (const consumer of consumers) expect(consumer).toBe(workers.get(name));
    child?.kill("SIGINT");
    const { code, stdout, stderr } = await running;
    expect(code).toBe(130);
    // Stopped for all: at most ap-south's row (its NXDOMAIN answers at once), never the held regions' nor a verdict.
    expect(stdout.split("\n").filter((line) => line !== "")).toEqual(
      stdout === "" ? [] : [expect.stringMatching(/^VANTAGE\s/), expect.stringMatching(/^ap-south\s+done\s+DOWN\s/)],
    );
    expect(stderr).toContain("interrupted");
  }, 60_000);
});
