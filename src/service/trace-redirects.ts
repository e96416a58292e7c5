import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { TraceRedirectsRequest, TraceRedirectsResponse } from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticEnv } from "../diagnostics/diagnostic-env.js";

/** The TraceRedirects RPC: validate the input, run the trace, map the result to the message. */
export function createTraceRedirectsHandler(_env: DiagnosticEnv) {
  return async (_request: TraceRedirectsRequest, _context: HandlerContext): Promise<TraceRedirectsResponse> => {
    throw new ConnectError("redirect-check is not available yet", Code.Unimplemented);
  };
}
