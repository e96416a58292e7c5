import { isMessage, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { CheckSiteRequestSchema, TraceRedirectsRequestSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { readVantageList } from "../vantage-list.js";
import type { VantageFanout } from "./vantage-fanout.js";

/**
 * Before the charge, on every door: a request naming vantages has them
 * resolved, so its price (per vantage) and its run see the same list. A list
 * that is not one is refused here, with nothing charged (it has no price);
 * `all` becomes the names of every vantage with a live instance now, sorted;
 * named vantages are deduplicated and sorted. Other requests pass untouched.
 */
export function createVantagePlanner(fanout: Pick<VantageFanout, "alive">): Interceptor {
  return (next) => async (req) => {
    if (req.stream || !asksVantages(req.message)) return next(req);
    const list = readVantageList(req.message.vantages);
    switch (list.kind) {
      case "none":
        return next(req);
      case "problem":
        throw new ConnectError(list.problem.reason, Code.InvalidArgument);
      case "all":
        return next(Object.assign({}, req, { message: withVantages(req.message, (await fanout.alive()).map((vantage) => vantage.name)) }));
      case "names":
        return next(Object.assign({}, req, { message: withVantages(req.message, list.names) }));
    }
  };
}

type VantageRequest = Message & { vantages: string[] };

function asksVantages(message: Message): message is VantageRequest {
  return (isMessage(message, CheckSiteRequestSchema) || isMessage(message, TraceRedirectsRequestSchema)) && message.vantages.length > 0;
}

/** A copy with the list resolved: messages are plain objects, and the door's own stays as it came. */
function withVantages<M extends VantageRequest>(message: M, names: readonly string[]): M {
  return Object.assign({}, message, { vantages: [...names] });
}
