import { afterAll, beforeAll, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { type TestEnv, createTestEnv, checkSite } from "../fixtures/test-env.js";

let targets: HttpTargets;
let env: TestEnv;

beforeAll(async () => {
  targets = await startHttpTargets({ routes: { "/hang": { kind: "hang" } } });
  env = createTestEnv({ siteTimeoutMs: 5_000 });
});
afterAll(async () => {
  await env.close();
  await targets.close();
});

it("a check its caller ends is cancelled, as a trace is, rather than thrown", async () => {
  const caller = new AbortController();
  const reason = new Error("client went away");
  const pending = checkSite(targets.url("/hang"), env, caller.signal);
  // Abort once the request has reached the target, so the hop is in flight.
  while (targets.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  caller.abort(reason);
  expect(await pending).toEqual({ kind: "cancelled", reason });
});
