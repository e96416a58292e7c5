/**
 * What a validating resolver says of a name's DNSSEC, for details only: one A
 * query with EDNS0 and the DO bit, asked of the resolver's own servers (the
 * configured ones, else the system's: never another address), its answer's
 * AD flag read (the resolver validated it) and, on a failure, its Extended
 * DNS Errors (RFC 8914). c-ares, which makes the lookup itself, shows
 * neither: it sets no DO bit and hands over no OPT record.
 *
 * The answer is a DNS server's bytes: a datagram of at most MAX_ANSWER_BYTES
 * is decoded with dns-packet inside a try (a value for every input), any
 * other is dropped unread; the whole reading takes at most DNSSEC_QUERY_MS.
 */
import { randomInt } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { promises as dns } from "node:dns";
import { isIP } from "node:net";
import dnsPacket from "dns-packet";
import type { AbortWatch } from "./clock.js";
import { EDE_OPTION_CODE, type ExtendedDnsError, MAX_EXTENDED_ERRORS, parseExtendedDnsError, saysBogus } from "./extended-dns-error.js";

/** The whole reading, every server tried included: a silent server costs details this much at most. */
export const DNSSEC_QUERY_MS = 1_000;
/** The EDNS0 payload size offered (the DNS Flag Day 2020 value): an answer larger than this came truncated or from no honest server. */
export const UDP_PAYLOAD_SIZE = 1_232;
/** A datagram past this is dropped unread. */
export const MAX_ANSWER_BYTES = 4_096;

/**
 * validated: the resolver set AD on its answer (NOERROR or NXDOMAIN);
 * unvalidated: it answered without AD (an unsigned zone, or a resolver that
 * does not validate); bogus: it failed the name with an Extended DNS Error
 * that says validation failed; unknown: no answer, another failure, or not asked.
 */
export type DnssecState = "validated" | "unvalidated" | "bogus" | "unknown";

export interface DnssecReading {
  readonly state: DnssecState;
  /** The answer's response code (NOERROR, SERVFAIL, NXDOMAIN ...); null when none came. */
  readonly rcode: string | null;
  /** The answer's Extended DNS Errors, at most MAX_EXTENDED_ERRORS. */
  readonly extendedErrors: readonly ExtendedDnsError[];
}

export const DNSSEC_NOT_READ: DnssecReading = Object.freeze({ state: "unknown", rcode: null, extendedErrors: Object.freeze([]) });

/** Reads `host`'s DNSSEC state from `servers` (SITEDIAG_DNS_SERVERS; empty for the system's). Never throws. */
export async function readDnssec(host: string, servers: readonly string[], signal: AbortWatch): Promise<DnssecReading> {
  if (signal.aborted) return DNSSEC_NOT_READ;
  const targets = (servers.length > 0 ? servers : systemServers()).flatMap((server) => {
    const parsed = serverAddress(server);
    return parsed === null ? [] : [parsed];
  });
  if (targets.length === 0) return DNSSEC_NOT_READ;
  const deadline = performance.now() + DNSSEC_QUERY_MS;
  // Each server in turn, as the resolver tries them, with an even share of what time is left.
  for (const [index, target] of targets.entries()) {
    const left = deadline - performance.now();
    if (left <= 0 || signal.aborted) break;
    const reading = await askOne(host, target, left / (targets.length - index), signal);
    if (reading !== null) return reading;
  }
  return DNSSEC_NOT_READ;
}

interface ServerAddress {
  readonly address: string;
  readonly port: number;
  readonly family: 4 | 6;
}

function systemServers(): string[] {
  try {
    return new dns.Resolver().getServers();
  } catch {
    return [];
  }
}

/** "1.2.3.4", "1.2.3.4:53", "::1", "[::1]:53", as SITEDIAG_DNS_SERVERS and c-ares write them; null for anything else. */
export function serverAddress(server: string): ServerAddress | null {
  const bracketed = /^\[([0-9a-fA-F:.]{2,45})\](?::(\d{1,5}))?$/.exec(server);
  const [address, port] =
    bracketed !== null ? [bracketed[1] ?? "", bracketed[2]] : isIP(server) !== 0 ? [server, undefined] : splitPort(server);
  const family = isIP(address);
  const number = port === undefined ? 53 : Number(port);
  if (family === 0 || !Number.isInteger(number) || number < 1 || number > 65_535) return null;
  return { address, port: number, family: family === 6 ? 6 : 4 };
}

function splitPort(server: string): [string, string | undefined] {
  const colon = server.lastIndexOf(":");
  return colon < 0 ? [server, undefined] : [server.slice(0, colon), server.slice(colon + 1)];
}

/** One query to one server; null when it did not answer in `budgetMs` (the next server is asked). */
function askOne(host: string, target: ServerAddress, budgetMs: number, signal: AbortWatch): Promise<DnssecReading | null> {
  const id = randomInt(0, 65_536);
  const question = { type: "A" as const, name: host };
  let query: Buffer;
  let socket: Socket;
  try {
    query = dnsPacket.encode({
      type: "query",
      id,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [question],
      additionals: [
        {
          type: "OPT",
          name: ".",
          udpPayloadSize: UDP_PAYLOAD_SIZE,
          extendedRcode: 0,
          ednsVersion: 0,
          flags: dnsPacket.DNSSEC_OK,
          flag_do: true,
          options: [],
        },
      ],
    });
    socket = createSocket({ type: target.family === 6 ? "udp6" : "udp4", recvBufferSize: 65_536 });
  } catch {
    // A name dns-packet cannot write (a label past 63 bytes): details' own extra, never the hop's answer.
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    const finish = (reading: DnssecReading | null) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      socket.removeAllListeners("message");
      socket.on("error", () => undefined);
      try {
        socket.close();
      } catch {
        // Already closed by an error: nothing left to release.
      }
      resolve(reading);
    };
    const onAbort = () => finish(null);
    const timer = setTimeout(() => finish(null), budgetMs);
    signal.addEventListener("abort", onAbort, { once: true });
    // An ICMP port unreachable, or a send the system refuses: this server gives no answer.
    socket.on("error", () => finish(null));
    socket.on("message", (message, peer) => {
      // Only the server asked may answer, and only to this query: anything else is ignored, as the resolver ignores it.
      if (peer.address !== target.address || peer.port !== target.port) return;
      const reading = readAnswer(message, id, host);
      if (reading !== null) finish(reading);
    });
    socket.send(query, target.port, target.address, (error) => {
      if (error !== null && error !== undefined) finish(null);
    });
  });
}

/** The reading of one datagram; null for one that is not the answer to our query (kept waiting for the right one). */
export function readAnswer(message: Buffer, id: number, host: string): DnssecReading | null {
  if (message.length < 12 || message.length > MAX_ANSWER_BYTES) return null;
  if (message.readUInt16BE(0) !== id) return null;
  let packet: dnsPacket.DecodedPacket;
  try {
    packet = dnsPacket.decode(message);
  } catch {
    // Our id, but bytes no DNS message has: the server answered, with nothing to read.
    return DNSSEC_NOT_READ;
  }
  if (!packet.flag_qr) return null;
  const asked = packet.questions?.[0]?.name;
  if (asked !== undefined && asked.toLowerCase().replace(/\.$/, "") !== host.toLowerCase().replace(/\.$/, "")) return null;
  const rcode = RCODES[(packet.flags ?? 0) & 0xf] ?? `RCODE${(packet.flags ?? 0) & 0xf}`;
  const extendedErrors = extendedErrorsOf(packet);
  if (rcode === "NOERROR" || rcode === "NXDOMAIN") return { state: packet.flag_ad ? "validated" : "unvalidated", rcode, extendedErrors };
  return { state: saysBogus(extendedErrors) ? "bogus" : "unknown", rcode, extendedErrors };
}

const RCODES: readonly string[] = [
  "NOERROR",
  "FORMERR",
  "SERVFAIL",
  "NXDOMAIN",
  "NOTIMP",
  "REFUSED",
  "YXDOMAIN",
  "YXRRSET",
  "NXRRSET",
  "NOTAUTH",
  "NOTZONE",
];

/** The EDE options of the answer's OPT record (RFC 6891 allows one OPT; a second is read as well, bounded the same). */
function extendedErrorsOf(packet: dnsPacket.DecodedPacket): ExtendedDnsError[] {
  const errors: ExtendedDnsError[] = [];
  for (const record of packet.additionals ?? []) {
    if (record.type !== "OPT") continue;
    for (const option of record.options as readonly unknown[]) {
      if (errors.length === MAX_EXTENDED_ERRORS) return errors;
      const data = optionData(option);
      if (data === null) continue;
      const parsed = parseExtendedDnsError(data);
      if (parsed !== null) errors.push(parsed);
    }
  }
  return errors;
}

/** The data of an EDE option as dns-packet decodes it ({ code, data }); null for any other option. */
function optionData(option: unknown): Uint8Array | null {
  if (typeof option !== "object" || option === null || !("code" in option) || option.code !== EDE_OPTION_CODE) return null;
  return "data" in option && option.data instanceof Uint8Array ? option.data : null;
}
