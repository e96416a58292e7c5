import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check.js";
import { vantagesCommand } from "../../src/cli/vantages.js";
import { VERSION } from "../../src/package-info.js";
import { runDiagnose } from "../fixtures/cli-io.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { redisAvailability } from "../../testkit/redis-server.js";
import { startThreeVantages, type ThreeVantages } from "../fixtures/three-vantages.js";
import { eventually } from "../fixtures/vantage-rig.js";
import { killAndRestartRegion } from "../fixtures/killed-region.js";

// Known regions, with three real `serve` processes on one Redis: `all` is
// every vantage seen within the retention window, so a frozen (SIGSTOP) or
// killed region is not dropped from the answer but answered unavailable at
// once, with when it was last seen, free; `sitediag vantages list` and
// `forget`; and a region on an older build (SITEDIAG_VANTAGE_VERSION) makes a
// warning; a killed region, then started again (test/fixtures/killed-region.ts). Nothing here waits for a deadline.

const redisHere = redisAvailability();
const OLD_BUILD = "0.0.1-old";
const BUDGET = 1_000;

describe.skipIf(!redisHere.available)("known regions: all is every vantage seen, live or not", () => {
  let targets: HttpTargets;
  let rig: ThreeVantages;
  const env = () => ({ SITEDIAG_STORE: rig.redis.url(), SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8" });

  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/ok": { kind: "respond", status: 200 } } });
    rig = await startThreeVantages(
      targets.httpPort,
      (name): Record<string, string> => (name === "ap-south" ? { SITEDIAG_VANTAGE_VERSION: OLD_BUILD } : {}),
    );
  }, 120_000);

  afterAll(async () => {
    rig?.serves.get("ap-south")?.child.kill("SIGCONT");
    await rig?.close();
    await targets?.close();
  });

  async function used(): Promise<number> {
    return (await rig.store.usage(rig.key.id, { budget: BUDGET, windowSeconds: 86_400 })).used;
  }

  async function fromAll(): Promise<{
    vantages: { verdict: string; entries: JsonObject[]; differences: JsonObject[] | null };
    took: number;
  }> {
    const started = performance.now();
    const response = await fetch(
      `${rig.asker.url}/api/v1/is-site-down?${new URLSearchParams({ url: targets.url("/ok"), vantages: "all" }).toString()}`,
      { headers: { "x-api-key": rig.key.secret } },
    );
    const body = (await response.json()) as {
      data: { vantages: { verdict: string; entries: JsonObject[]; differences: JsonObject[] | null } };
    };
    return { vantages: body.data.vantages, took: performance.now() - started };
  }

  it("a region on another build: each entry names its build, and the CLI warns that they differ", async () => {
    const { vantages } = await fromAll();
    expect(vantages.verdict).toBe("up_everywhere");
    expect(vantages.entries.map((entry) => (entry.vantage as JsonObject).version)).toEqual([OLD_BUILD, VERSION, VERSION]);
    expect(vantages.differences).toEqual([
      {
        aspect: "version",
        values: [
          { value: OLD_BUILD, vantages: ["ap-south"] },
          { value: VERSION, vantages: ["eu-west", "us-east"] },
        ],
      },
    ]);
    const cli = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/ok")], env());
    expect(cli.code).toBe(0);
    expect(cli.stderr).toBe(
      `sitediag: warning: the vantages that answered run different builds (ap-south ${OLD_BUILD}; eu-west, us-east ${VERSION}): their answers may differ for that reason alone\n`,
    );
  }, 60_000);

  it("vantages list: each vantage live, its instance, build and clock offset from this machine", async () => {
    const { code, stdout } = await runDiagnose(vantagesCommand, ["list"], env());
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^VANTAGE\s+STATE\s+LAST SEEN\s+INSTANCE\s+BUILD\s+CLOCK OFFSET$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^ap-south\\s+live\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z \\(\\d+ s ago\\)\\s+\\S+\\s+${OLD_BUILD.replaceAll(".", "\\.")}\\s+[+-]?\\d+ ms$`,
      ),
    );
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(["ap-south", "eu-west", "us-east"]);
  });

  it("a frozen region (SIGSTOP) is answered unavailable at once once its heartbeat has expired, with when it was last seen, and not charged", async () => {
    const south = rig.serves.get("ap-south");
    south?.child.kill("SIGSTOP");
    // Its heartbeat expires 5 s after its last beat: from then on `all` knows it is silent.
    // Asked before then, it would be sent the job and waited for: read the list until it says so.
    await eventually(
      async () => (/^ap-south\s+not live/m.test((await runDiagnose(vantagesCommand, ["list"], env())).stdout) ? true : undefined),
      30_000,
    );
    const before = await used();
    const { vantages, took } = await fromAll();
    const [silent] = vantages.entries;
    expect(silent?.vantage).toMatchObject({
      name: "ap-south",
      state: "unavailable",
      code: "no_live_instance",
      elapsedMs: 0,
      version: OLD_BUILD,
    });
    expect((silent?.vantage as JsonObject).reason).toMatch(
      /^No instance of this vantage has been seen since \d{4}-\d\d-\d\dT[\d:.]+Z; nothing is known/,
    );
    expect(Date.parse(String((silent?.vantage as JsonObject).lastSeen))).toBeLessThan(Date.now() - 4_000);
    // Never "everywhere" with a region silent, and the two that answered are all that is charged.
    expect(vantages.verdict).toBe("up_where_answered");
    expect((await used()) - before).toBe(2 * 2);
    // Not awaited to the deadline (32 s): answered as soon as the two live ones were.
    expect(took).toBeLessThan(32_000);
    const cli = await runDiagnose(checkCommand, ["--vantages", "all", targets.url("/ok")], env());
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(
      /^ap-south\s+unavailable\s+-\s+-\s+0 ms\s+no_live_instance\s+No instance of this vantage has been seen since/m,
    );
    expect(cli.stdout).toContain(`up_where_answered  ${targets.url("/ok")}  (3 vantages: 1 unavailable, 2 done; not seen from ap-south)`);
    const listed = await runDiagnose(vantagesCommand, ["list"], env());
    expect(listed.stdout).toMatch(/^ap-south\s+not live\s+\S+ \(\d+ s ago\)\s+\S+ \(gone\)/m);
  }, 90_000);

  it("vantages forget retires it: all asks the two left; thawed, it comes back with its next heartbeat", async () => {
    const forgot = await runDiagnose(vantagesCommand, ["forget", "ap-south"], env());
    expect(forgot.code).toBe(0);
    expect(forgot.stdout).toMatch(/^forgot ap-south \(1 instance\)/);
    const { vantages } = await fromAll();
    expect(vantages.entries.map((entry) => (entry.vantage as JsonObject).name)).toEqual(["eu-west", "us-east"]);
    expect(vantages.verdict).toBe("up_everywhere");
    expect((await runDiagnose(vantagesCommand, ["forget", "ap-south"], env())).code).toBe(1);
    rig.serves.get("ap-south")?.child.kill("SIGCONT");
    await eventually(async () => ((await fromAll()).vantages.entries.length === 3 ? true : undefined), 30_000);
  }, 90_000);

  it("a killed region (SIGKILL, its only process): unavailable at once with when it was last seen, not live in the list; started again, live and answered", async () => {
    const south = rig.serves.get("ap-south");
    if (south === undefined) throw new Error("no ap-south");
    await killAndRestartRegion({
      cliEnv: env(),
      askerUrl: rig.asker.url,
      key: rig.key.secret,
      target: targets.url("/ok"),
      used,
      victim: { name: "ap-south", serve: south },
      restart: () => rig.restart("ap-south"),
    });
  }, 180_000);

  it("on the SQLite store there is nothing to list: it says so, exit 2", async () => {
    const { code, stderr } = await runDiagnose(vantagesCommand, ["list"], {});
    expect(code).toBe(2);
    expect(stderr).toContain('its one vantage is this machine ("local")');
  });
});
