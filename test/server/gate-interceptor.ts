import { ConnectError, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { type Door } from "../../src/server/door/call.js";
import { callKey } from "../../src/service/call.js";

/** What a test gate saw of one call that reached the interceptors. */
export interface GateVisit {
  readonly door: Door;
  readonly method: string;
  readonly apiKey: string | null;
}

/**
 * An interceptor standing where the access interceptor stands, for the frame's
 * tests: it records every call that reaches it (the point where credits are
 * charged) and answers as `decide` says, with an error or with usage headers.
 */
export function createGate(decide: (request: UnaryRequest) => ConnectError | Headers | undefined = () => undefined) {
  const visits: GateVisit[] = [];
  const interceptor: Interceptor = (next) => async (request) => {
    visits.push({ door: request.contextValues.get(callKey)?.door ?? "connect", method: request.method.name, apiKey: request.header.get("x-api-key") });
    if (request.stream) return next(request);
    const decision = decide(request);
    if (decision instanceof ConnectError) throw decision;
    const response = await next(request);
    decision?.forEach((value, name) => response.header.set(name, value));
    return response;
  };
  return { interceptor, visits };
}
