import type { AddressRange } from "./address-ranges.js";
import { inputRefusalCause } from "./failure-causes.js";
import type { PolicyRefusal } from "./refusal.js";

/**
 * A refusal from its row of the one table. `reason` is given only where the row
 * is worded with specifics (a port, an address); otherwise it is the row's own.
 */
export function refusal(key: `INPUT_${string}`, reason?: string, range?: AddressRange | null): PolicyRefusal {
  const info = inputRefusalCause(key);
  const base = { rule: info.rule, code: info.code, reason: reason ?? info.reason };
  return range === undefined || range === null ? base : Object.assign({}, base, { range: { cidr: range.cidr, name: range.name, rfc: range.source } });
}
