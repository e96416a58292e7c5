import { create } from "@bufbuild/protobuf";
import {
  type SearchSignals as SearchSignalsMessage,
  SearchCanonicalSchema,
  SearchNoindexSchema,
  SearchSignalsSchema,
  SearchSoft404Schema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { SearchSignals } from "../diagnostics/search-signals.js";

/** What the final page tells search engines as the public `SearchSignals` message; nulls become unset fields. */
export function searchMessage(signals: SearchSignals): SearchSignalsMessage {
  const { noindex, canonical, soft404 } = signals;
  return create(SearchSignalsSchema, {
    noindex:
      noindex === null
        ? undefined
        : create(SearchNoindexSchema, { source: noindex.source, directive: noindex.directive, scope: noindex.scope ?? undefined }),
    canonical: canonical === null ? undefined : create(SearchCanonicalSchema, canonical),
    redirectToHome: signals.redirectToHome,
    soft404: soft404 === null ? undefined : create(SearchSoft404Schema, soft404),
    bodyRead: signals.bodyRead,
  });
}
