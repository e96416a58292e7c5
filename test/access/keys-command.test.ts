import { afterEach, describe, expect, it } from "vitest";
import { digestApiKey } from "../../src/access/api-key.js";
import { ensureFirstKey } from "../../src/access/issue-key.js";
import type { AccessStore } from "../../src/access/store.js";
import { keysCommand } from "../../src/cli/keys.js";
import { loadConfig } from "../../src/config.js";
import { sqliteStoreUnderTest, type StoreUnderTest } from "../fixtures/store-harness.js";
import { parseTargetInput } from "../../src/diagnostics/diagnostic-call.js";

function buffer() {
  let text = "";
  return { write: (chunk: string) => (text += chunk), text: () => text };
}

describe("sitediag keys", () => {
  let harness: StoreUnderTest;

  afterEach(async () => {
    await harness.cleanup();
  });

  function io(env: Record<string, string> = {}) {
    const stdout = buffer();
    const stderr = buffer();
    const location =
      harness.location.kind === "sqlite"
        ? `sqlite:${harness.location.path}`
        : harness.location.kind === "redis"
          ? harness.location.url
          : "";
    const config = loadConfig({ SITEDIAG_STORE: location, ...env });
    return { io: { stdout, stderr, config, onStopSignal: () => () => undefined }, stdout, stderr };
  }

  async function run(argv: string[], env: Record<string, string> = {}) {
    const { io: commandIo, stdout, stderr } = io(env);
    const code = await keysCommand.run(argv, commandIo);
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  }

  /** A key's row of `keys list`, found by name: keys made in the same millisecond are listed by their random ids. */
  function rowNamed(listing: string, name: string): string | undefined {
    return listing.split("\n").find((row) => row.split(/\s+/)[1] === name);
  }

  it("creates a key, printing the key alone on stdout and the details on stderr", async () => {
    harness = sqliteStoreUnderTest();
    const created = await run(["create", "--name", "ci runner"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^sd_[0-9A-Za-z]{28}\n$/);
    expect(created.stderr).toMatch(/^created key_[0-9a-f]{16} \("ci runner"\); the key above is shown only this once\n$/);
    expect(created.stderr).not.toContain(created.stdout.trim());
    const store = await harness.open();
    expect((await store.findKeyByDigest(digestApiKey(created.stdout.trim())))?.name).toBe("ci runner");
  });

  it("lists keys with credits used in the current window, and revokes by id", async () => {
    harness = sqliteStoreUnderTest();
    const secret = (await run(["create", "--name=alpha"])).stdout.trim();
    await run(["create", "--name", "beta"]);
    const store: AccessStore = await harness.open();
    await store.charge(digestApiKey(secret), 5, { budget: 40, windowSeconds: 60 });

    const listed = await run(["list"], { SITEDIAG_CREDIT_BUDGET: "40", SITEDIAG_CREDIT_WINDOW_SECONDS: "60" });
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID\s+NAME\s+CREATED\s+REVOKED\s+USED$/);
    expect(rows).toHaveLength(2);
    const alpha = rowNamed(listed.stdout, "alpha");
    expect(alpha).toMatch(/^(key_[0-9a-f]{16})\s+alpha\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+-\s+5\/40$/);
    expect(rowNamed(listed.stdout, "beta")).toMatch(/^key_[0-9a-f]{16}\s+beta\s+\S+\s+-\s+0\/40$/);
    const id = /^(key_[0-9a-f]{16})/.exec(alpha ?? "")?.[1] ?? "";

    expect(await run(["revoke", id])).toMatchObject({ code: 0, stdout: `revoked ${id} ("alpha")\n` });
    expect(await store.charge(digestApiKey(secret), 1, { budget: 40, windowSeconds: 60 })).toEqual({ kind: "unauthenticated" });
    expect((await run(["revoke", id])).stdout).toMatch(/was already revoked at \d{4}-/);
    expect(rowNamed((await run(["list"])).stdout, "alpha")).toMatch(/alpha\s+\S+Z\s+\S+Z\s+5\/300$/);
    expect(await run(["revoke", "key_0000000000000000"])).toMatchObject({ code: 1, stderr: "no key with id key_0000000000000000\n" });
  });

  it("gives a key its own budget at creation or later, lists it, and takes it back to the instance's", async () => {
    harness = sqliteStoreUnderTest();
    const created = await run(["create", "--name", "audit", "--budget", "1000"]);
    expect(created.code).toBe(0);
    expect(created.stderr).toMatch(/^created (key_[0-9a-f]{16}) \("audit"\) with its own budget of 1000 credits; /);
    const id = /(key_[0-9a-f]{16})/.exec(created.stderr)?.[1] ?? "";
    const store = await harness.open();
    await store.charge(digestApiKey(created.stdout.trim()), 5, { budget: 300, windowSeconds: 86_400 });
    expect((await run(["list"])).stdout.split("\n")[1]).toMatch(/audit\s+\S+Z\s+-\s+5\/1000\*$/);

    expect(await run(["set-budget", id, "20"])).toMatchObject({
      code: 0,
      stdout: `${id} ("audit") now has its own budget of 20 credits per 86400-second window\n`,
    });
    expect((await run(["list"])).stdout.split("\n")[1]).toMatch(/5\/20\*$/);
    expect((await run(["set-budget", id, "default"])).stdout).toMatch(/now has the instance's budget \(SITEDIAG_CREDIT_BUDGET, 300 here\)/);
    expect((await run(["list"])).stdout.split("\n")[1]).toMatch(/5\/300$/);
    expect(await run(["set-budget", "key_0000000000000000", "5"])).toMatchObject({
      code: 1,
      stderr: "no key with id key_0000000000000000\n",
    });
  });

  it("says how to start when there are no keys", async () => {
    harness = sqliteStoreUnderTest();
    expect(await run(["list"])).toMatchObject({
      code: 0,
      stdout: "",
      stderr: expect.stringMatching(/^no keys yet; create one with: \S.* keys create\n$/) as unknown,
    });
  });

  it("refuses a wrong command line with exit code 2", async () => {
    harness = sqliteStoreUnderTest();
    const wrong = [
      [],
      ["create", "extra"],
      ["create", "--name", " "],
      ["create", "--nam", "x"],
      ["create", "--name", "x", "--budget", "0"],
      ["create", "--name", "x", "--budget", "1.5"],
      ["create", "--name", "x", "--budget", "1000000001"],
      ["revoke"],
      ["revoke", "sd_x"],
      ["list", "extra"],
      ["set-budget"],
      ["set-budget", "key_0000000000000000"],
      ["set-budget", "key_0000000000000000", "-1"],
      ["set-budget", "sd_x", "5"],
      ["frobnicate"],
    ];
    for (const argv of wrong) {
      const result = await run(argv);
      expect(result.code, argv.join(" ")).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("usage:");
    }
    for (const argv of [["--help"], ["-h"], ["create", "--help"], ["list", "-h"]]) {
      const help = await run(argv);
      expect(help, argv.join(" ")).toMatchObject({ code: 0, stderr: "" });
      expect(help.stdout).toContain("usage:");
    }
  });

  it("creates a key without --name, named by when it was made", async () => {
    harness = sqliteStoreUnderTest();
    const created = await run(["create"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^sd_\w+\n$/);
    expect(created.stderr).toMatch(/^created key_[0-9a-f]{16} \("key \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"\); /);
    expect((await run(["list"])).stdout.split("\n")[1]).toMatch(/key \d{4}-\d\d-\d\dT\S+Z\s+\S+Z\s+-\s+0\/300$/);
  });

  it("exits 1 with a reason when the store cannot be reached", async () => {
    harness = sqliteStoreUnderTest();
    // Port 1 on loopback: nothing listens there, so the connection is refused without leaving the machine.
    const result = await run(["list"], { SITEDIAG_STORE: "redis://127.0.0.1:1" });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^cannot reach the key store \(redis:\/\/127\.0\.0\.1:1\/?\): /);
  });
});

describe("first key on serve", () => {
  let harness: StoreUnderTest;

  afterEach(async () => {
    await harness.cleanup();
  });

  it("creates and prints one key with a call to complete on an empty store, and nothing afterwards", async () => {
    harness = sqliteStoreUnderTest();
    const store = await harness.open();
    const out = buffer();
    const issued = await ensureFirstKey(store, out, "http://127.0.0.1:8080/");
    expect(issued).toBeDefined();
    const secret = issued?.secret ?? "";
    expect(out.text()).toContain(`\n  ${secret}\n`);
    expect(out.text()).toContain(`curl -H 'x-api-key: ${secret}' 'http://127.0.0.1:8080/api/v1/is-site-down?url=`);
    // The hint names no real site: pasted unchanged, its URL is refused before any lookup.
    const hinted = /is-site-down\?url=([^']+)'/.exec(out.text())?.[1] ?? "";
    expect(parseTargetInput(hinted, { allowBareDomain: false })).toMatchObject({ ok: false, refusal: { rule: "invalid_url" } });
    expect((await store.charge(digestApiKey(secret), 2, { budget: 300, windowSeconds: 86_400 })).kind).toBe("admitted");

    const again = buffer();
    expect(await ensureFirstKey(store, again, "http://127.0.0.1:8080")).toBeUndefined();
    expect(again.text()).toBe("");
    expect(await store.countKeys()).toBe(1);
  });
});
