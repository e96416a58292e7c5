import { create } from "@bufbuild/protobuf";
import {
  ChainStatus,
  type CheckSiteResponse,
  type Details,
  FailedStage,
  type TraceRedirectsResponse,
  type VantageDifference,
  VantageDifferenceSchema,
  VantageDifferenceValueSchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";

// "What differs between regions", computed once by the service for every
// door, the CLI and the page: for each aspect a person compares first (the
// addresses the name resolved to and who resolved it, the status, the final
// URL, the certificate, where it failed), the values the vantages that
// answered saw, when they are not all the same. Entries without data
// (unavailable, refused) saw nothing and are left out.

/** One answered vantage's data, by its name. */
export type AnsweredData = { readonly name: string; readonly version?: string | undefined } & (
  | { readonly kind: "site-check"; readonly data: CheckSiteResponse }
  | { readonly kind: "trace"; readonly data: TraceRedirectsResponse }
);

/** When a value is absent from one answer (no status: it failed before any answer). */
const NONE = "none";

/** Bounds what one value may hold: an aspect is read from what targets and resolvers sent. */
const MAX_VALUE_LENGTH = 300;
const MAX_ADDRESSES = 8;

type Aspect = { readonly aspect: (kind: AnsweredData["kind"]) => string; readonly read: (answer: AnsweredData) => string | undefined };

/** The aspects in the order a line lists them; `undefined` from read: not known from this answer (no details), left out. */
const ASPECTS: readonly Aspect[] = [
  { aspect: () => "addresses", read: (answer) => addressesOf(answer.data.details) },
  { aspect: () => "resolver", read: (answer) => resolverOf(answer.data.details) },
  { aspect: () => "status", read: (answer) => numberText(answer.kind === "site-check" ? answer.data.statusCode : answer.data.finalStatus) },
  {
    aspect: () => "final_url",
    read: (answer) => (answer.kind === "site-check" ? (answer.data.finalUrl ?? NONE) : answer.data.finalUrl || NONE),
  },
  { aspect: () => "certificate", read: (answer) => certificateOf(answer.data.details) },
  {
    aspect: (kind) => (kind === "site-check" ? "failed_stage" : "chain_status"),
    read: (answer) => (answer.kind === "site-check" ? stageText(answer.data.failedStage) : chainText(answer.data.chainStatus)),
  },
  // Regions on different builds can read the same answer apart: the warning every reader shows.
  { aspect: () => "version", read: (answer) => answer.version },
];

/** The differences over `answers` (name order kept from the caller); empty when they all agree, or fewer than two answered. */
export function vantageDifferences(answers: readonly AnsweredData[]): VantageDifference[] {
  if (answers.length < 2) return [];
  const kind = answers[0]?.kind ?? "site-check";
  const differences: VantageDifference[] = [];
  for (const { aspect, read } of ASPECTS) {
    const byValue = new Map<string, string[]>();
    for (const answer of answers) {
      const value = read(answer);
      if (value === undefined) continue;
      const bounded = value.length > MAX_VALUE_LENGTH ? `${value.slice(0, MAX_VALUE_LENGTH)}…` : value;
      const names = byValue.get(bounded) ?? [];
      names.push(answer.name);
      byValue.set(bounded, names);
    }
    if (byValue.size < 2) continue;
    const values = [...byValue.entries()].map(([value, vantages]) => create(VantageDifferenceValueSchema, { value, vantages }));
    differences.push(create(VantageDifferenceSchema, { aspect: aspect(kind), values }));
  }
  return differences;
}

/** The target's own name's answer (the first resolution): its addresses, or how it failed (NXDOMAIN, dns_timeout). */
function addressesOf(details: Details | undefined): string | undefined {
  const resolution = details?.resolutions[0];
  if (resolution === undefined) return undefined;
  if (resolution.answers.length === 0) return resolution.rcode ?? resolution.code ?? NONE;
  const addresses = [...new Set(resolution.answers.map((answer) => answer.address))].sort();
  const shown = addresses.slice(0, MAX_ADDRESSES).join(", ");
  return addresses.length > MAX_ADDRESSES ? `${shown} (+${addresses.length - MAX_ADDRESSES})` : shown;
}

/** Who answered that lookup: the servers asked, or the hosts file. */
function resolverOf(details: Details | undefined): string | undefined {
  const source = details?.resolutions[0]?.source;
  if (source === undefined) return undefined;
  if (source.kind === "hosts_file") return `hosts file ${source.path ?? ""}`.trimEnd();
  return source.servers.length === 0 ? source.kind : `${source.kind} ${source.servers.join(", ")}`;
}

/** The final answer's leaf certificate (SHA-256); "none" for an answer over plain HTTP or none at all. */
function certificateOf(details: Details | undefined): string | undefined {
  if (details === undefined) return undefined;
  return details.requests.at(-1)?.tls?.certificate?.fingerprintSha256 || NONE;
}

function numberText(value: number | undefined): string {
  return value === undefined ? NONE : String(value);
}

function stageText(stage: FailedStage | undefined): string {
  return stage === undefined ? NONE : (FailedStage[stage] ?? "unknown").toLowerCase();
}

function chainText(status: ChainStatus): string {
  return (ChainStatus[status] ?? "unknown").toLowerCase();
}
