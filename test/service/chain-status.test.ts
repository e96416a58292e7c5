import { describe, expect, it } from "vitest";
import { ChainStatus } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { CHAIN_STATUS_IDS } from "../../src/diagnostics/redirect-trace-result.js";
import { chainStatusOf, chainStatusWording } from "../../src/service/trace-redirects.js";

describe("chain statuses: neutral ids inside, the contract's wording from the proto's rest_value", () => {
  it("every id the diagnostic names has its own enum value", () => {
    const values = CHAIN_STATUS_IDS.map(chainStatusOf);
    expect(new Set(values).size).toBe(CHAIN_STATUS_IDS.length);
    expect(values).not.toContain(ChainStatus.UNSPECIFIED);
    expect(chainStatusOf("redirects_detected")).toBe(ChainStatus.REDIRECTS_DETECTED);
  });

  it("the wording of every id is the contract's (spec §2.3), read off the proto", () => {
    expect(CHAIN_STATUS_IDS.map(chainStatusWording)).toEqual([
      "Healthy",
      "Redirects detected",
      "Redirect loop",
      "Too many redirects",
      "Request failed",
      "Timeout",
    ]);
  });
});
