/**
 * What an RDAP domain answer (RFC 9083 §5.3) says of a registration: its
 * registrar, when it was registered and expires, its status. The answer is a
 * registry's bytes: at most MAX_RDAP_BYTES are parsed, by JSON.parse inside a
 * try, and read by total functions: texts shown as certificate texts are
 * (control characters as U+FFFD) and cut, lists bounded.
 */
import { shownText } from "../probe/connect/certificate-text.js";

/** The largest answer read: a domain object is a few KiB; a registry sending more is not answered. */
export const MAX_RDAP_BYTES = 64 * 1024;
/** Status values kept (RFC 8056 maps EPP's 17; a registry lists a handful). */
export const MAX_STATUS_VALUES = 16;
/** Characters kept of a registrar's name or a status value. */
const MAX_TEXT_CHARS = 120;

export interface RegistrationFacts {
  readonly registrar: string | null;
  /** ISO 8601, UTC. */
  readonly created: string | null;
  readonly expires: string | null;
  readonly status: readonly string[];
  /** A status of clientHold or serverHold ("client hold", "server hold" in RDAP's words): the registry keeps the domain out of DNS. */
  readonly suspended: boolean;
}

/** The facts of an answer's bytes; null when they are not an RDAP domain object (not JSON, not an object). */
export function readRdapDomain(bytes: Uint8Array): RegistrationFacts | null {
  if (bytes.length > MAX_RDAP_BYTES) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8"));
  } catch {
    // Not JSON, or nested past the engine's stack: not an answer.
    return null;
  }
  if (!isObject(parsed)) return null;
  const status = (Array.isArray(parsed["status"]) ? parsed["status"] : [])
    .filter((value): value is string => typeof value === "string")
    .slice(0, MAX_STATUS_VALUES);
  const shown = status.map((value) => cut(shownText(value)));
  return {
    registrar: registrarOf(parsed["entities"]),
    created: eventDate(parsed["events"], "registration"),
    expires: eventDate(parsed["events"], "expiration"),
    status: shown,
    suspended: status.some((value) => HOLDS.has(value.toLowerCase().replaceAll(" ", ""))),
  };
}

const HOLDS: ReadonlySet<string> = new Set(["clienthold", "serverhold"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function cut(text: string): string {
  return text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS - 1)}…` : text;
}

/** The first event of this action with a date Date can read, as ISO 8601 UTC. */
function eventDate(events: unknown, action: string): string | null {
  if (!Array.isArray(events)) return null;
  for (const event of events.slice(0, 64)) {
    if (!isObject(event) || event["eventAction"] !== action) continue;
    const date = event["eventDate"];
    if (typeof date !== "string" || date.length > 64) continue;
    const time = Date.parse(date);
    if (Number.isFinite(time)) return new Date(time).toISOString();
  }
  return null;
}

/** The name of the entity with the "registrar" role: its jCard's fn (RFC 7095), else its handle. */
function registrarOf(entities: unknown): string | null {
  if (!Array.isArray(entities)) return null;
  for (const entity of entities.slice(0, 64)) {
    if (!isObject(entity) || !Array.isArray(entity["roles"]) || !entity["roles"].includes("registrar")) continue;
    const name = vcardName(entity["vcardArray"]) ?? (typeof entity["handle"] === "string" ? entity["handle"] : null);
    return name === null || name.trim() === "" ? null : cut(shownText(name.trim()));
  }
  return null;
}

/** ["vcard", [["fn", {}, "text", "Example Registrar, Inc."], ...]]: the fn property's value. */
function vcardName(vcard: unknown): string | null {
  if (!Array.isArray(vcard) || vcard[0] !== "vcard" || !Array.isArray(vcard[1])) return null;
  for (const property of (vcard[1] as unknown[]).slice(0, 64)) {
    if (Array.isArray(property) && property[0] === "fn" && typeof property[3] === "string") return property[3];
  }
  return null;
}
