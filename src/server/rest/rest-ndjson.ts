import { isMessage, type JsonObject, type Message } from "@bufbuild/protobuf";
import {
  CheckSiteResponseSchema,
  CheckSitesResponseSchema,
  TraceExpectationSchema,
  TraceRedirectsBatchResponseSchema,
  TraceRedirectsResponseSchema,
} from "../../../gen/sitediag/v1/diagnostics_pb.js";
import { errorBody, type RestMeta, successBody } from "./rest-envelope.js";
import { renderMessage } from "./rest-render.js";

/**
 * One NDJSON line of a REST batch answer: the documented envelope of the
 * item's operation, with its place in the request beside it. An item with a
 * result is `{"ok": true, "data", "meta", "index", "url"}` (data exactly as
 * the single-URL route's; a trace item adds "expectation", null when none
 * was asked); an item without one is the error envelope with "index" and "url".
 */
export function batchLine(item: Message, meta: RestMeta): JsonObject {
  if (isMessage(item, CheckSitesResponseSchema)) {
    const place = { index: item.index, url: item.url };
    if (item.outcome.case === "result") return Object.assign({}, successBody(renderMessage(CheckSiteResponseSchema, item.outcome.value), meta), place);
    return Object.assign({}, errorBody(item.outcome.value?.code ?? "internal", item.outcome.value?.message ?? "no result", meta), place);
  }
  if (isMessage(item, TraceRedirectsBatchResponseSchema)) {
    const place = { index: item.index, url: item.url };
    if (item.outcome.case === "result") {
      const expectation = item.expectation === undefined ? null : renderMessage(TraceExpectationSchema, item.expectation);
      return Object.assign({}, successBody(renderMessage(TraceRedirectsResponseSchema, item.outcome.value), meta), { expectation }, place);
    }
    return Object.assign({}, errorBody(item.outcome.value?.code ?? "internal", item.outcome.value?.message ?? "no result", meta), place);
  }
  throw new TypeError(`${item.$typeName} is not a batch item`);
}
