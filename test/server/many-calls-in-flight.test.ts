import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTargets, startHttpTargets } from "../fixtures/http-targets.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";

describe("many calls in flight at once", () => {
  let targets: HttpTargets;
  let service: TestService;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  beforeAll(async () => {
    targets = await startHttpTargets({ routes: { "/slow": { kind: "respond", status: 200, delayMs: 300 } } });
    service = await startTestService();
    process.on("warning", onWarning);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await service?.close();
    await targets?.close();
  });

  it("serves 30 overlapping REST and 30 Connect checks with no MaxListenersExceededWarning", async () => {
    const url = targets.url("/slow");
    const rest = Array.from({ length: 30 }, () => fetch(`${service.url}/api/v1/is-site-down?url=${encodeURIComponent(url)}`));
    const connect = Array.from({ length: 30 }, () =>
      fetch(`${service.url}/sitediag.v1.DiagnosticsService/CheckSite`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url }),
      }),
    );
    const responses = await Promise.all([...rest, ...connect]);
    expect(responses.map((response) => response.status)).toEqual(Array.from({ length: 60 }, () => 200));
    const bodies = (await Promise.all(responses.map((response) => response.json()))) as { data?: { status: string }; status?: string }[];
    expect(bodies.slice(0, 30).every((body) => body.data?.status === "up")).toBe(true);
    expect(bodies.slice(30).every((body) => body.status === "SITE_STATUS_UP")).toBe(true);
    // Node emits warnings on the next tick.
    await new Promise((wait) => setImmediate(wait));
    expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning")).toEqual([]);
  });
});
