import type { DiagnosticDetails, RequestRecord } from "../../diagnostics/diagnostic-details.js";
import type { NameResolution } from "../../probe/name-resolution.js";
import type { Paint } from "./terminal-text.js";

/**
 * One line per lookup in details.resolutions, naming the rows of the table
 * that used it, as the certificate lines do:
 *
 *     dns  www.example.test → cdn.example.net: 192.0.2.1 (ttl 60), 2001:db8::1 (ttl 60); 1.2 ms from 192.0.2.53  (requests 1, 2)
 *     dns  gone.example.test: NXDOMAIN (dns_no_such_host); 0.4 ms from 192.0.2.53  (request 3)
 *     dnssec  gone.example.test: bogus; Extended DNS Error 6 DNSSEC Bogus "RRSIG expired"
 *
 * `rows` are the table's rows, numbered from 1; `noun` names them. A lookup
 * no row used (a name the policy refused) has no rows to name. The texts are
 * the resolution's own, already bounded and with control characters replaced.
 */
export function resolutionLines(
  details: DiagnosticDetails | undefined,
  rows: readonly RequestRecord[],
  noun: string,
  paint: Paint,
): string {
  return (details?.resolutions ?? [])
    .map((resolution, index) => {
      const used = rows.flatMap((row, at) => (row.resolution === index ? [at + 1] : []));
      const suffix = used.length === 0 ? "" : `  ${paint.dim(`(${noun}${used.length === 1 ? "" : "s"} ${used.join(", ")})`)}`;
      return `  ${paint.dim("dns")}  ${describeResolution(resolution, paint)}${suffix}\n${dnssecLine(resolution, paint)}`;
    })
    .join("");
}

/** The question and its chain, then what came back, then how long and from whom. */
export function describeResolution(resolution: NameResolution, paint: Paint): string {
  const chain = [resolution.name, ...resolution.cnameChain].join(" → ");
  const cut = CHAIN_ENDS[resolution.cnameChainEnd];
  return `${chain}${cut === "" ? "" : ` ${paint.warn(cut)}`}: ${outcome(resolution, paint)}; ${resolution.timeMs.toFixed(1)} ms ${source(resolution)}`;
}

const CHAIN_ENDS: Readonly<Record<NameResolution["cnameChainEnd"], string>> = {
  complete: "",
  not_asked: "",
  too_long: "→ … (chain cut at 8 links)",
  loop: "(CNAME loop)",
  failed: "(CNAME chain not known past here)",
};

function outcome(resolution: NameResolution, paint: Paint): string {
  if (resolution.code !== null) return paint.bad(`${resolution.rcode ?? "no answer"} (${resolution.code})`);
  const answers = resolution.answers.map(({ address, ttl }) => (ttl === null ? address : `${address} (ttl ${ttl})`));
  const more = resolution.answersOmitted > 0 ? [`and ${resolution.answersOmitted} more`] : [];
  return [...answers, ...more].join(", ");
}

function source(resolution: NameResolution): string {
  const { source } = resolution;
  if (source.kind === "hosts_file") return `from the hosts file ${source.path}`;
  const servers = source.servers.length === 0 ? "no servers listed" : source.servers.join(", ");
  return source.kind === "configured" ? `from ${servers}` : `from the system's ${servers}`;
}

const DNSSEC_STATES: Readonly<Record<NameResolution["dnssec"], string>> = {
  validated: "validated (the resolver set AD)",
  unvalidated: "not validated (no AD: unsigned, or a resolver that does not validate)",
  bogus: "bogus",
  unknown: "unknown",
};

/** The first host's DNSSEC reading under its lookup; nothing for a lookup not read. */
function dnssecLine(resolution: NameResolution, paint: Paint): string {
  if (resolution.dnssec === "unknown" && resolution.extendedErrors.length === 0) return "";
  const state = DNSSEC_STATES[resolution.dnssec];
  const painted = resolution.dnssec === "bogus" ? paint.bad(state) : resolution.dnssec === "validated" ? paint.good(state) : state;
  const errors = resolution.extendedErrors.map(
    ({ infoCode, name, extraText }) =>
      `Extended DNS Error ${infoCode}${name === "" ? "" : ` ${name}`}${extraText === "" ? "" : ` "${extraText}"`}`,
  );
  return `  ${paint.dim("dnssec")}  ${resolution.name}: ${painted}${errors.length === 0 ? "" : `; ${errors.join("; ")}`}\n`;
}
