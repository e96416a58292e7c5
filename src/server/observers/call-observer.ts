import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { doorKey } from "../rpc/door.js";
import { callRecordKey } from "./call-record.js";

/**
 * First in the chain on every door: writes into the request's call record
 * what only the RPC layer knows, the door, the operation, the target
 * and the outcome code, whether the call is answered by the service or
 * refused by a later interceptor (in-flight cap, key, credits).
 */
export function createCallObserver(): Interceptor {
  return (next) => async (req) => {
    const record = req.contextValues.get(callRecordKey);
    if (record !== undefined) {
      record.door = req.contextValues.get(doorKey);
      record.operation = req.method.name;
      if (!req.stream && "url" in req.message && typeof req.message.url === "string") record.target = req.message.url;
    }
    try {
      const res = await next(req);
      if (record !== undefined) record.outcome = "ok";
      return res;
    } catch (error) {
      if (record !== undefined) record.outcome = codeToString(ConnectError.from(error).code);
      throw error;
    }
  };
}
