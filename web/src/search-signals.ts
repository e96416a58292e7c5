import type { Details, SearchSignals } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h, table } from "./dom.js";

/**
 * "Search engines": what the final page tells them (details.search), one
 * row per signal with what was read, so a clean page says so plainly. The
 * warnings these call for are listed once, with the view's other warnings,
 * not here again.
 */
export function renderSearch(details: Details | undefined): HTMLElement | null {
  const search = details?.search;
  if (search === undefined) return null;
  const rows: Child[][] = [
    ["Indexing", indexing(search)],
    ["Canonical URL", canonical(search)],
    ["Redirected to a home page", search.redirectToHome ? "yes: a deep URL sent to a site's root reads as a soft 404" : "no"],
    [
      "Reads as not found",
      search.soft404 === undefined
        ? search.bodyRead
          ? "no"
          : "not read (no HTML body)"
        : `yes: its ${search.soft404.source === "title" ? "title" : "first heading"} reads “${search.soft404.text}”`,
    ],
  ];
  return h(
    "section",
    { class: "search-signals", "aria-labelledby": "search-heading" },
    h("h3", { id: "search-heading" }, "Search engines"),
    table("What the final page tells search engines", ["Signal", "What the page says"], rows, "search-table"),
  );
}

function indexing(search: SearchSignals): string {
  const noindex = search.noindex;
  if (noindex === undefined) return "indexable (no noindex)";
  const where =
    noindex.source === "meta"
      ? `<meta name="${noindex.scope ?? "robots"}">`
      : `X-Robots-Tag${noindex.scope === undefined ? "" : ` for ${noindex.scope}`}`;
  return `${noindex.directive}: not indexed (${where})`;
}

function canonical(search: SearchSignals): Child {
  const named = search.canonical;
  if (named === undefined) return "none named";
  const source = named.source === "link_element" ? "link element" : "Link header";
  return h("span", {}, h("span", { class: "url" }, named.url), named.elsewhere ? ` (another URL; ${source})` : ` (this page; ${source})`);
}
