import { VantageVerdict } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { VantageVerdictId } from "./vantage-verdict.js";

/** The proto value of each verdict the one rule (vantage-verdict.ts) can give: the service answers with it, the page reads it back. */
export const VERDICT_VALUES: Readonly<Record<VantageVerdictId, VantageVerdict>> = {
  up_everywhere: VantageVerdict.UP_EVERYWHERE,
  down_everywhere: VantageVerdict.DOWN_EVERYWHERE,
  down_in_some: VantageVerdict.DOWN_IN_SOME,
  blocked_in_some: VantageVerdict.BLOCKED_IN_SOME,
  unavailable: VantageVerdict.UNAVAILABLE,
  up_where_answered: VantageVerdict.UP_WHERE_ANSWERED,
  down_where_answered: VantageVerdict.DOWN_WHERE_ANSWERED,
};
