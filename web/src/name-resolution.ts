import type { Details, NameResolution, NameResolutionSource } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h, table } from "./dom.js";
import { formatMs } from "./format.js";

/** What a cut chain says beside its last link. */
const CHAIN_ENDS: Readonly<Record<string, string>> = {
  too_long: "cut at 8 links",
  loop: "CNAME loop",
  failed: "not known past here",
};

/**
 * One row per lookup of details.resolutions: the name and its CNAME chain,
 * the answers with their TTLs (or the server's rcode beside the failure
 * code), who answered and how long it took, and the requests that used it.
 * Every text is the service's already bounded, escaped copy of what the
 * server sent, and is set as text.
 */
export function renderNameResolution(details: Details): HTMLElement | null {
  if (details.resolutions.length === 0) return null;
  const rows = details.resolutions.map((resolution, index) => {
    const used = details.requests.flatMap((request, at) => (request.resolution === index ? [at + 1] : []));
    return [
      used.length === 0 ? "–" : used.join(", "),
      nameCell(resolution),
      answersCell(resolution),
      sourceText(resolution.source),
      formatMs(resolution.timeMs),
    ];
  });
  return h(
    "section",
    { class: "name-resolution", "aria-labelledby": "name-resolution-heading" },
    h("h3", { id: "name-resolution-heading" }, "Name resolution"),
    table(
      "What each host name resolved to (A and AAAA), through which CNAMEs, from which resolver",
      ["Requests", "Name", "Answers", "Resolver", "Time"],
      rows,
      "resolution-table",
    ),
  );
}

function nameCell(resolution: NameResolution): HTMLElement {
  const end = CHAIN_ENDS[resolution.cnameChainEnd];
  return h(
    "span",
    { class: "resolution-name" },
    h("span", { class: "url" }, resolution.name),
    ...resolution.cnameChain.map((link) => h("span", { class: "cname" }, "→ CNAME ", h("span", { class: "url" }, link))),
    end === undefined ? null : h("span", { class: "badge warn" }, end),
  );
}

function answersCell(resolution: NameResolution): Child {
  if (resolution.code !== undefined) return h("span", { class: "badge bad" }, `${resolution.rcode ?? "no answer"} · ${resolution.code}`);
  const answers = resolution.answers.map(({ address, ttl }) =>
    h("span", { class: "answer" }, h("span", { class: "address" }, address), ttl === undefined ? null : h("small", {}, ` TTL ${ttl} s`)),
  );
  const more = resolution.answersOmitted > 0 ? h("small", {}, `and ${resolution.answersOmitted} more`) : null;
  return h("span", { class: "answers" }, ...answers, more);
}

function sourceText(source: NameResolutionSource | undefined): string {
  if (source === undefined) return "–";
  if (source.kind === "hosts_file") return `hosts file ${source.path ?? ""}`;
  const servers = source.servers.join(", ") || "none listed";
  return source.kind === "configured" ? `configured: ${servers}` : `system: ${servers}`;
}
