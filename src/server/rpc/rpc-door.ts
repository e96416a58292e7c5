import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { API_KEY_HEADER } from "../../access/api-key.js";
import { type Admission, type Arrival, callContextValues, rpcDoorOf, takeIn } from "../door/call-intake.js";
import { answerDefect, type NodeRequest, type NodeResponse } from "../door/json-answer.js";
import { requestBody } from "../door/request-body.js";
import type { DiagnosticRoute } from "../door/route-table.js";

/**
 * Serves a request on one of Connect's paths, for the Connect, gRPC and
 * gRPC-Web doors. A diagnostic call is taken in first, from its headers
 * alone (admission, then its Call); then Connect serves it, or answers
 * admission's refusal in the form of the request's own protocol. Health and
 * reflection (`diagnostic` null) go straight to Connect.
 */
export function serveRpc(
  handler: UniversalHandler,
  diagnostic: DiagnosticRoute | null,
  admission: Admission | undefined,
  request: NodeRequest,
  response: NodeResponse,
  arrival: Arrival,
  onDefect: (error: unknown) => void,
): void {
  if (diagnostic === null) return serve(handler, request, response, undefined, onDefect);
  const key = request.headers[API_KEY_HEADER];
  takeIn(admission, arrival, response, rpcDoorOf(request.headers["content-type"]), diagnostic, typeof key === "string" ? key : null).then(
    (intake) => {
      if (intake.ok) return serve(handler, request, response, callContextValues(intake.call), onDefect);
      serve(handler, request, response, undefined, onDefect, intake.error);
    },
    (reason: unknown) => answerDefect(response, reason, onDefect),
  );
}

function serve(
  handler: UniversalHandler,
  request: NodeRequest,
  response: NodeResponse,
  contextValues: ContextValues | undefined,
  onDefect: (error: unknown) => void,
  refusal?: ConnectError,
): void {
  const universalRequest = universalRequestFromNodeRequest(request, response, undefined, contextValues);
  // A refused call is still answered by Connect, so each protocol gets its own
  // error form (JSON, trailers); the error comes out of the body the moment
  // Connect starts reading it, and not one byte of the real body is read.
  // Otherwise Connect reads the body the doors' way (its own reader, never
  // started, would destroy the request when it stops at the size limit).
  const served =
    refusal === undefined ? Object.assign({}, universalRequest, { body: requestBody(request) }) : refusedRequest(universalRequest, refusal);
  handler(served)
    .then((universalResponse) => universalResponseToNodeResponse(universalResponse, response))
    .catch((reason: unknown) => {
      // A client that hung up mid-call is not a server defect.
      if (ConnectError.from(reason).code !== Code.Aborted) onDefect(reason);
    });
}

/**
 * The request as Connect sees it when admission refused it: no length (Connect
 * would judge a declared length first, answering "too large" where the
 * answer is "who are you") and a body that throws the refusal when read.
 */
function refusedRequest(request: UniversalServerRequest, error: ConnectError): UniversalServerRequest {
  const header = new Headers(request.header);
  header.delete("content-length");
  const body: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
  return Object.assign({}, request, { header, body });
}
