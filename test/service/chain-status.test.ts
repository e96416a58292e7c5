import { describe, expect, it } from "vitest";
import { ChainStatus } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { CHAIN_STATUS_NAMES } from "../../src/diagnostics/redirect-trace-types.js";
import { chainStatusOf } from "../../src/service/trace-redirects.js";

describe("chain statuses meet the enum through the proto's rest_value, not a second table", () => {
  it("every status the diagnostic names has its own enum value", () => {
    const values = CHAIN_STATUS_NAMES.map(chainStatusOf);
    expect(new Set(values).size).toBe(CHAIN_STATUS_NAMES.length);
    expect(values).not.toContain(ChainStatus.UNSPECIFIED);
    expect(chainStatusOf("Redirects detected")).toBe(ChainStatus.REDIRECTS_DETECTED);
  });
});
