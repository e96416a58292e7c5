import { ChainStatus } from "../../gen/sitediag/v1/diagnostics_pb.js";

/** The contract's words for each chain status. */
export const CHAIN_STATUS_TEXT: Readonly<Record<ChainStatus, string>> = {
  [ChainStatus.UNSPECIFIED]: "Unknown",
  [ChainStatus.HEALTHY]: "Healthy",
  [ChainStatus.REDIRECTS_DETECTED]: "Redirects detected",
  [ChainStatus.REDIRECT_LOOP]: "Redirect loop",
  [ChainStatus.TOO_MANY_REDIRECTS]: "Too many redirects",
  [ChainStatus.REQUEST_FAILED]: "Request failed",
  [ChainStatus.TIMEOUT]: "Timeout",
};
