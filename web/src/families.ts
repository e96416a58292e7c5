import type { Details, FamilyComparison, RequestDetail } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h, table } from "./dom.js";
import { formatMs } from "./format.js";

const FAMILY_NAMES: Readonly<Record<number, string>> = { 4: "IPv4", 6: "IPv6" };

const FAMILY_CODES: ReadonlySet<string> = new Set(["ipv6_unreachable", "ipv4_unreachable", "families_disagree"]);

/**
 * "Both IP families": when the first host has both A and AAAA addresses, the
 * diagnostic's first request and the same request made over the other
 * family, side by side (address, answer or failure, time, the leaf
 * certificate's fingerprint), and whether they answered alike. The warnings
 * the comparison called for are listed once, with the view's other warnings
 * (a trace's, a check's evidence warnings), not here again. The verdict
 * above is the first request's; this is evidence beside it.
 */
export function renderFamilies(details: Details | undefined): HTMLElement | null {
  const families = details?.families;
  if (details === undefined || families === undefined) return null;
  const picked = pickedRequest(details.requests, families);
  const rows = [
    familyRow(families.pickedFamily, picked, "the diagnostic's own request"),
    families.request === undefined
      ? refusedRow(families)
      : familyRow(families.otherFamily, families.request, "the same request, once more"),
  ];
  const warnings = details.warnings.filter((warning) => FAMILY_CODES.has(warning.code));
  return h(
    "section",
    { class: "families", "aria-labelledby": "families-heading" },
    h("h3", { id: "families-heading" }, "Both IP families"),
    table(
      "The first request over the family Happy Eyeballs picked, and over the other one",
      ["Family", "Address", "Answer", "Time", "Leaf certificate (SHA-256)", ""],
      rows,
      "families-table",
    ),
    h(
      "p",
      { class: "note" },
      warnings.length === 0
        ? "Both families answered alike."
        : `They did not answer alike: ${warnings.length === 1 ? "its warning is" : "their warnings are"} listed under Warnings, above.`,
    ),
  );
}

/** The first request's record: the first with the method the other family's request repeated (a trace's HEAD, or the GET sent in its place). */
function pickedRequest(requests: readonly RequestDetail[], families: FamilyComparison): RequestDetail | undefined {
  const method = families.request?.method;
  return requests.find((request) => method === undefined || request.method === method) ?? requests[0];
}

function familyRow(family: number, request: RequestDetail | undefined, note: string): Child[] {
  const name = FAMILY_NAMES[family] ?? String(family);
  if (request === undefined) return [name, "–", "–", "–", "–", note];
  const leaf = request.tls?.certificate?.fingerprintSha256;
  return [
    name,
    request.remoteAddress ?? "–",
    answerCell(request),
    formatMs(request.timings?.totalMs ?? 0),
    leaf === undefined ? "–" : h("code", { class: "fingerprint", title: leaf }, leaf),
    note,
  ];
}

function refusedRow(families: FamilyComparison): Child[] {
  const name = FAMILY_NAMES[families.otherFamily] ?? String(families.otherFamily);
  return [name, "–", h("span", { class: "badge bad" }, "not sent"), "–", "–", families.refusedReason ?? "refused by the target policy"];
}

function answerCell(request: RequestDetail): Child {
  const failure = request.failure;
  if (failure !== undefined)
    return h(
      "span",
      { class: "badge bad", title: failure.reason },
      `${failure.timedOut ? "timed out" : "failed"} at ${failure.stage}: ${failure.code}`,
    );
  if (request.status === undefined) return "–";
  return h("span", { class: `badge ${request.status >= 500 ? "bad" : request.status >= 400 ? "warn" : "ok"}` }, String(request.status));
}
