import { type DescMessage, isMessage, type JsonObject, type Message } from "@bufbuild/protobuf";
import {
  CheckSiteResponseSchema,
  TraceRedirectsResponseSchema,
  VantageCheckSiteResponseSchema,
  VantageSiteChecksSchema,
  VantageTraceRedirectsResponseSchema,
  VantageTracesSchema,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { renderMessage } from "./rest-render.js";

/**
 * A unary answer's `data`. A call from several vantages has no answer of its
 * own at the top, only its vantages' (docs/api.md): its data is the input as
 * given and `vantages` ({verdict, entries}, each entry's `data` the
 * contract's object as that vantage saw it), with none of the contract's
 * top-level fields, so nothing reads as if one place spoke for all. Every
 * other answer renders as the contract has it.
 */
export function restData(schema: DescMessage, message: Message): JsonObject {
  if (isMessage(message, CheckSiteResponseSchema) && message.vantages !== undefined) {
    return { requestedUrl: message.requestedUrl, vantages: renderMessage(VantageSiteChecksSchema, message.vantages) };
  }
  if (isMessage(message, TraceRedirectsResponseSchema) && message.vantages !== undefined) {
    return { input: message.input, vantages: renderMessage(VantageTracesSchema, message.vantages) };
  }
  return renderMessage(schema, message);
}

/** The `data` of one NDJSON line of a streamed call from several vantages (`{"entry", "verdict"}`, one of them null); undefined for any other message. */
export function vantageEvent(item: Message): JsonObject | undefined {
  if (isMessage(item, VantageCheckSiteResponseSchema)) return renderMessage(VantageCheckSiteResponseSchema, item);
  if (isMessage(item, VantageTraceRedirectsResponseSchema)) return renderMessage(VantageTraceRedirectsResponseSchema, item);
  return undefined;
}
