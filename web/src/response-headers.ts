import type { RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { h } from "./dom.js";

/**
 * Each request's response header fields as the service received them (names
 * as the server spelled them, in order, Set-Cookie values redacted to the
 * cookie's name), one collapsed block per request, numbered as the
 * waterfall's table. Null when no request has any.
 */
export function renderResponseHeaders(requests: readonly RequestDetail[]): HTMLElement | null {
  const blocks = requests.flatMap((request, index) => {
    if (request.responseHeaders.length === 0) return [];
    const summary = `Request ${index + 1}: ${request.method} ${request.url}${request.status === undefined ? "" : ` (${request.status})`}, ${request.responseHeaders.length} field${request.responseHeaders.length === 1 ? "" : "s"}`;
    const rows = request.responseHeaders.map((field) => h("tr", {}, h("th", { scope: "row" }, field.name), h("td", {}, field.value)));
    return [
      h(
        "details",
        { class: "response-headers" },
        h("summary", {}, summary),
        h(
          "table",
          { class: "header-fields" },
          h("caption", {}, `Response header fields of request ${index + 1}, as received`),
          h("tbody", {}, ...rows),
        ),
        request.responseHeadersTruncated ? h("p", { class: "note" }, "Fields past the first 64 KiB of the head are left out.") : null,
      ),
    ];
  });
  if (blocks.length === 0) return null;
  return h(
    "section",
    { class: "headers-section", "aria-labelledby": "response-headers-heading" },
    h("h3", { id: "response-headers-heading" }, "Response headers"),
    h("p", { class: "note" }, "As received, in order; cookie values are not shown."),
    ...blocks,
  );
}
