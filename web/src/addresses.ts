import type { AddressAttempt, Details } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Child, h, table } from "./dom.js";
import { formatMs } from "./format.js";

const ADDRESS_CODES: ReadonlySet<string> = new Set(["address_unreachable", "addresses_disagree"]);

/**
 * "Every address": when a family of the first host has two or more
 * addresses, the first request at each (the first request's own address is
 * its row, not sent again): its answer or failure, connect, TLS and
 * first-byte times, the leaf certificate, and the addresses not tried. The
 * warnings it called for are listed once, under Warnings. The verdict above
 * is the first request's; this is evidence beside it.
 */
export function renderAddresses(details: Details | undefined): HTMLElement | null {
  const survey = details?.addresses;
  if (details === undefined || survey === undefined) return null;
  const rows = survey.attempts.map(addressRow);
  const warned = details.warnings.some((warning) => ADDRESS_CODES.has(warning.code));
  const untried =
    survey.untried === 0
      ? ""
      : ` ${survey.untried} more address${survey.untried === 1 ? " was" : "es were"} not tried (at most 8 of each family).`;
  return h(
    "section",
    { class: "addresses", "aria-labelledby": "addresses-heading" },
    h("h3", { id: "addresses-heading" }, "Every address"),
    table(
      "The first request at each address of its host",
      ["Address", "Family", "Answer", "Connect", "TLS", "First byte", "Leaf certificate (SHA-256)", ""],
      rows,
      "addresses-table",
    ),
    h(
      "p",
      { class: "note" },
      `${warned ? "Not every address answered alike: see Warnings, above." : "Every address answered alike."}${untried}`,
    ),
  );
}

function addressRow(attempt: AddressAttempt): Child[] {
  const leaf = attempt.certificateSha256;
  return [
    attempt.address,
    attempt.family === 6 ? "IPv6" : "IPv4",
    answerCell(attempt),
    msCell(attempt.connectMs),
    msCell(attempt.tlsMs),
    msCell(attempt.firstByteMs),
    leaf === undefined ? "–" : h("code", { class: "fingerprint", title: leaf }, leaf),
    attempt.firstRequest ? "the diagnostic's own request" : "",
  ];
}

function answerCell(attempt: AddressAttempt): Child {
  if (attempt.outcome === "refused") return h("span", { class: "badge bad", title: attempt.reason ?? "" }, "not sent");
  if (attempt.outcome === "failed")
    return h(
      "span",
      { class: "badge bad", title: attempt.reason ?? "" },
      `failed at ${attempt.failedStage ?? "?"}: ${attempt.code ?? "?"}`,
    );
  const status = attempt.status ?? 0;
  return h("span", { class: `badge ${status >= 500 ? "bad" : status >= 400 ? "warn" : "ok"}` }, String(status));
}

function msCell(ms: number | undefined): string {
  return ms === undefined ? "–" : formatMs(ms);
}
