import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { CheckSiteRequest, CheckSiteResponse } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticEnv } from "../diagnostics/diagnostic-env.js";

/** The CheckSite RPC: validate the URL, run the site check, map the result to the message. */
export function createCheckSiteHandler(_env: DiagnosticEnv) {
  return async (_request: CheckSiteRequest, _context: HandlerContext): Promise<CheckSiteResponse> => {
    throw new ConnectError("is-site-down is not available yet", Code.Unimplemented);
  };
}
