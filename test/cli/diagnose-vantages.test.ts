import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { traceCommand } from "../../src/cli/trace.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { CLOUDFLARE_CHALLENGE } from "../fixtures/proxy-answers.js";
import { runDiagnose } from "../fixtures/cli-io.js";

// `sitediag check --vantages` / `trace --vantages`: run from the command line
// there is no engine, so the one vantage is this machine, `local`.

const ALLOW = { SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8,::1/128" };
let targets: HttpTargets;

beforeAll(async () => {
  targets = await startHttpTargets({
    routes: {
      "/old": { kind: "redirect", status: 301, location: "/new" },
      "/new": { kind: "respond", status: 200 },
      "/broken": { kind: "respond", status: 503 },
      "/hang": { kind: "hang" },
      "/challenge": CLOUDFLARE_CHALLENGE,
    },
  });
});

afterAll(async () => {
  await targets?.close();
});

describe("sitediag check --vantages", () => {
  it("all: one row, local, and the verdict up_everywhere; exit 0", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/old")], ALLOW);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^VANTAGE\s+STATE\s+ANSWER\s+STATUS\s+TIME\s+CODE\s+REASON$/);
    expect(lines[1]).toMatch(/^local\s+done\s+UP\s+200\s+\d+ ms$/);
    expect(lines[2]).toBe(`up_everywhere  ${targets.url("/old")}  (1 vantage: 1 done)`);
  });

  it("on the SQLite store it says that only this machine was asked; its help says what all means with each store", async () => {
    const { stderr } = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/old")], ALLOW);
    expect(stderr).toBe(
      'sitediag: --vantages: SITEDIAG_STORE is the SQLite store, so only this machine ("local") was asked; set it to the deployment\'s Redis to ask its regions\n',
    );
    for (const command of [checkCommand, traceCommand]) {
      const help = (await runDiagnose(command, ["--help"], ALLOW)).stdout.replace(/\s+/g, " ");
      expect(help).toContain(
        "SITEDIAG_STORE on Redis: the deployment's vantages; all is every one seen within SITEDIAG_VANTAGE_FORGET_AFTER",
      );
      expect(help).toContain('The SQLite store (the default): one vantage, this machine, "local"');
    }
  });

  it("a down site from the one vantage that answered, another unavailable: down_where_answered naming the silent one, exit 1", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, ["--vantages=local,eu-west", targets.url("/broken")], ALLOW);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^eu-west\s+unavailable\s+-\s+-\s+0 ms\s+no_live_instance\s+No instance of this vantage is live/m);
    expect(stdout).toMatch(/^local\s+done\s+DOWN\s+503\s+\d+ ms\s+http_server_error\s+Server returned 503 Service Unavailable$/m);
    expect(stdout).toContain(`down_where_answered  ${targets.url("/broken")}  (2 vantages: 1 unavailable, 1 done; not seen from eu-west)`);
  });

  it("--json prints the API's data object, entries and verdict", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, ["--json", "--vantages", "local", targets.url("/new")], ALLOW);
    expect(code).toBe(0);
    const data = JSON.parse(stdout) as JsonObject;
    expect(Object.keys(data)).toEqual(["requestedUrl", "vantages"]);
    expect((data.vantages as JsonObject).verdict).toBe("up_everywhere");
    expect(((data.vantages as JsonObject).entries as JsonObject[])[0]?.data).toMatchObject({ status: "up", statusCode: 200 });
  });

  it("a list that is not one is a usage error naming the rule, exit 2", async () => {
    const { code, stderr, stdout } = await runDiagnose(checkCommand, ["--vantages", "EU", targets.url("/new")], ALLOW);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/--vantages: vantages must be vantage names/);
  });

  it("a target this vantage refuses: its row says so, and the exit is a refusal's, 2", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, ["--vantages", "all", "http://10.0.0.1/"], ALLOW);
    expect(code).toBe(2);
    expect(stdout).toMatch(/^local\s+refused\s+-\s+-\s+\d+ ms\s+input_non_public_address\s+Target 10\.0\.0\.1 is not a public address/m);
    expect(stdout).toContain("unavailable  http://10.0.0.1/  (1 vantage: 1 refused; not seen from local)");
  });

  it("a proxy's challenge: the row says CHALLENGED with the provider's sentence, as a single check does", async () => {
    const { code, stdout } = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/challenge")], ALLOW);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^local\s+done\s+CHALLENGED\s+403\s+\d+ ms\s+Reachable, but a Cloudflare challenge answered: a browser may pass it; automated clients won't$/m,
    );
  });

  it("--json without --details is the API's answer without details; the table asked for them", async () => {
    const { stdout } = await runDiagnose(checkCommand, ["--json", "--vantages", "all", targets.url("/challenge")], ALLOW);
    const entry = (((JSON.parse(stdout) as JsonObject).vantages as JsonObject).entries as JsonObject[])[0];
    expect(Object.keys(entry?.data as JsonObject)).not.toContain("details");
  });

  it("a stop signal interrupts it, exit 130", async () => {
    const { code, stderr } = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/hang")], ALLOW, {
      onRunning: (stop) => setTimeout(stop, 200),
    });
    expect(code).toBe(130);
    expect(stderr).toContain("interrupted");
  });
});

describe("sitediag trace --vantages", () => {
  it("one row per vantage with the chain status and the final status", async () => {
    const { code, stdout } = await runDiagnose(traceCommand, ["--vantages", "all", targets.url("/old")], {
      ...ALLOW,
      SITEDIAG_TRACE_PORTS: String(targets.httpPort),
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^local\s+done\s+UP\s+200\s+\d+ ms$/m);
    expect(stdout).toContain("up_everywhere");
  });

  it("a 503 at the end of the chain: DOWN with final_status_error and the answer in words, never a bare 'Healthy 503'", async () => {
    const { code, stdout } = await runDiagnose(traceCommand, ["--vantages", "all", targets.url("/broken")], {
      ...ALLOW,
      SITEDIAG_TRACE_PORTS: String(targets.httpPort),
    });
    expect(code).toBe(1);
    expect(stdout).toMatch(/^local\s+done\s+DOWN\s+503\s+\d+ ms\s+final_status_error\s+The final URL answers 503 Service Unavailable$/m);
    expect(stdout).toContain("down_everywhere");
  });
});
