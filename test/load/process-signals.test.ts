import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "../../src/access/sqlite-store.js";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueKey } from "../../src/access/issue-key.js";
import { openStore } from "../../src/access/open-store.js";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type ServeProcess, startServeProcess } from "../fixtures/service-process.js";

const SLOW_MS = 1_500;

/** Charges recorded in a store file, read as another process would. */
function chargesIn(path: string): { rows: number; credits: number } {
  const db = new Database(path, { readonly: true });
  try {
    const row = db.prepare("SELECT COUNT(*) AS rows, COALESCE(SUM(cost), 0) AS credits FROM credit_charges").get() as {
      rows: number;
      credits: number;
    };
    return { rows: row.rows, credits: row.credits };
  } finally {
    db.close();
  }
}

describe("the service process under signals", () => {
  let dir: string;
  let targets: HttpTargets;
  const agent = new Agent({ connections: 64 });
  const running: ServeProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sitediag-signals-"));
    targets = await startHttpTargets({
      routes: { "/up": { kind: "respond", status: 200 }, "/slow": { kind: "respond", status: 200, delayMs: SLOW_MS } },
    });
  });
  afterAll(async () => {
    for (const serve of running) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill("SIGKILL");
    await agent.close();
    await targets?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function serve(store: string): Promise<ServeProcess> {
    const started = await startServeProcess({ SITEDIAG_STORE: `sqlite:${store}`, SITEDIAG_CREDIT_BUDGET: "100000" }, false);
    running.push(started);
    return started;
  }

  async function call(serveUrl: string, key: string, path: string): Promise<number> {
    try {
      const response = await request(`${serveUrl}/api/v1/is-site-down?url=${encodeURIComponent(targets.url(path))}`, {
        dispatcher: agent,
        headers: { "x-api-key": key },
      });
      const body = (await response.body.json()) as { data?: { status?: string } };
      return response.statusCode === 200 && body.data?.status !== "up" ? -1 : response.statusCode;
    } catch {
      return 0; // refused or cut: the service was no longer there
    }
  }

  it("finishes the checks in flight on SIGTERM, refuses new ones, and charges each call once", async () => {
    const store = join(dir, "sigterm.db");
    const first = await startServeProcess({ SITEDIAG_STORE: `sqlite:${store}`, SITEDIAG_CREDIT_BUDGET: "100000" }, true);
    running.push(first);
    const key = first.firstKey as string;
    const seenBefore = targets.requests.length;
    const inFlight = Array.from({ length: 30 }, () => call(first.url, key, "/slow"));
    const deadline = Date.now() + 10_000;
    while (targets.requests.length - seenBefore < 30 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));

    first.child.kill("SIGTERM");
    const late: Promise<number>[] = [];
    for (let i = 0; i < 20; i++) {
      late.push(call(first.url, key, "/up"));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const finished = await Promise.all(inFlight);
    const refused = await Promise.all(late);
    expect(await first.exited()).toBe(0);

    expect(finished).toEqual(Array.from({ length: 30 }, () => 200));
    // A call that arrived after the signal is either served in full (200) or refused; never half-done.
    expect(refused.filter((status) => status !== 200 && status !== 0 && status !== 503)).toEqual([]);
    const answered = finished.length + refused.filter((status) => status === 200).length;
    expect(chargesIn(store)).toEqual({ rows: answered, credits: 2 * answered });
  }, 30_000);

  it("loses no committed charge and no key when killed with SIGKILL and restarted", async () => {
    const store = join(dir, "sigkill.db");
    const first = await startServeProcess({ SITEDIAG_STORE: `sqlite:${store}`, SITEDIAG_CREDIT_BUDGET: "100000" }, true);
    running.push(first);
    const key = first.firstKey as string;
    // A second key, issued by another process on the same file while the service runs.
    const side = await openStore({ kind: "sqlite", path: store });
    const second = await issueKey(side, "second");
    await side.close();
    if (second === undefined) throw new Error("no second key");

    let answered = 0;
    let sent = 0;
    let killed = false;
    // Bounded in count and time: a service that stops answering 200 must end the loop, not spin it.
    const deadline = Date.now() + 20_000;
    const worker = async () => {
      while (!killed && sent < 5_000 && Date.now() < deadline) {
        sent++;
        if ((await call(first.url, key, "/up")) === 200) answered++;
        if (answered >= 150 && !killed) {
          killed = true;
          first.child.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    expect(killed).toBe(true);
    expect(await first.exited()).toBeNull();

    const after = chargesIn(store);
    // Every answered call had its charge committed before it ran; calls cut by the kill may or may not have.
    expect(after.rows).toBeGreaterThanOrEqual(answered);
    expect(after.rows).toBeLessThanOrEqual(sent);
    expect(after.credits).toBe(2 * after.rows);

    const restarted = await serve(store);
    expect(await call(restarted.url, key, "/up")).toBe(200);
    expect(await call(restarted.url, second.secret, "/up")).toBe(200);
    expect(chargesIn(store).rows).toBe(after.rows + 2);
    restarted.child.kill("SIGTERM");
    expect(await restarted.exited()).toBe(0);
  }, 40_000);
});
