import { isMessage, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  type Interceptor,
  type StreamRequest,
  type UnaryRequest,
} from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import {
  CheckSiteRequestSchema,
  TraceRedirectsRequestSchema,
  VantageCheckSiteRequestSchema,
  VantageTraceRedirectsRequestSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { readVantageList } from "../shared/vantage-list.js";
import type { KnownVantage, VantageFanout } from "../vantage/vantage-fanout.js";

/**
 * The vantages `all` named that are known but not live (seen within the
 * retention window, silent now), set by the planner beside the live names it
 * prices: the call answers them unavailable at once, and charges nothing for them.
 */
export const silentVantagesKey = createContextKey<readonly KnownVantage[]>([], { description: "vantages known but not live" });

/**
 * Before the charge, on every door: a request naming vantages has them
 * resolved, so its price (per vantage) and its run see the same list. A list
 * that is not one is refused here, with nothing charged (it has no price);
 * `all` becomes the names of every vantage with a live instance now, sorted;
 * named vantages are deduplicated and sorted. A streaming vantage method
 * must name some. Other requests pass untouched.
 */
export function createVantagePlanner(fanout: Pick<VantageFanout, "known">): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      if (!isVantageRequest(req.message) || (!isStreamingKind(req.message) && req.message.vantages.length === 0)) return next(req);
      return next(Object.assign({}, req, { message: await resolved(req.message, fanout, req.contextValues) }));
    }
    if (!isVantageMethod(req)) return next(req);
    // A server-streaming call's one request message arrives as a stream: read here, handed on as a fresh one.
    const messages: Message[] = [];
    for await (const message of req.message) messages.push(message);
    const [only] = messages;
    if (only === undefined || messages.length > 1 || !isVantageRequest(only))
      throw new ConnectError(`${req.method.name} takes exactly one request message`, Code.InvalidArgument);
    return next(Object.assign({}, req, { message: createAsyncIterable([await resolved(only, fanout, req.contextValues)]) }));
  };
}

type VantageRequest = Message & { vantages: string[] };

function isVantageRequest(message: Message): message is VantageRequest {
  return (
    isMessage(message, CheckSiteRequestSchema) ||
    isMessage(message, TraceRedirectsRequestSchema) ||
    isMessage(message, VantageCheckSiteRequestSchema) ||
    isMessage(message, VantageTraceRedirectsRequestSchema)
  );
}

function isStreamingKind(message: Message): boolean {
  return isMessage(message, VantageCheckSiteRequestSchema) || isMessage(message, VantageTraceRedirectsRequestSchema);
}

function isVantageMethod(req: UnaryRequest | StreamRequest): boolean {
  return (
    req.method.input.typeName === VantageCheckSiteRequestSchema.typeName ||
    req.method.input.typeName === VantageTraceRedirectsRequestSchema.typeName
  );
}

/** The request with its list resolved (a copy: messages are plain objects, and the door's own stays as it came), or the 400 of a list that is not one. */
async function resolved<M extends VantageRequest>(message: M, fanout: Pick<VantageFanout, "known">, values: ContextValues): Promise<M> {
  // The streaming methods have no plain form: no vantages reads as an empty name, which is no name.
  const list = readVantageList(message.vantages.length === 0 ? [""] : message.vantages);
  switch (list.kind) {
    case "none":
      return message;
    case "problem":
      throw new ConnectError(list.problem.reason, Code.InvalidArgument);
    case "all": {
      const known = await fanout.known();
      const alive = known.filter((vantage) => vantage.live).map((vantage) => vantage.info.name);
      // Nothing live (this instance is stopping): no list to price or run, and never the plain call in its place.
      if (alive.length === 0)
        throw new ConnectError("no vantage has a live instance now; retry shortly (nothing was charged)", Code.Unavailable, {
          "retry-after": "1",
        });
      // Priced by the live ones; the silent ones ride beside, to be answered unavailable at once.
      values.set(
        silentVantagesKey,
        known.filter((vantage) => !vantage.live),
      );
      return Object.assign({}, message, { vantages: alive });
    }
    case "names":
      return Object.assign({}, message, { vantages: [...list.names] });
  }
}
