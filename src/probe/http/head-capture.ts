// The response head's field lines as a person reads them (details' response
// headers): names as the server spelled them, in order, bounded, and no
// cookie's value. Built only when a diagnostic asks for details.

/** The most of a head kept: field lines counted as sent ("Name: value" and CRLF). */
export const MAX_CAPTURED_HEAD_BYTES = 64 * 1024;

/** Replaces a Set-Cookie value: the cookie's name is kept, its value and attributes never leave the probe. */
export const REDACTED = "[redacted]";

export interface CapturedHead {
  /** [name as sent, value], in the order received; Set-Cookie values reduced to `name=[redacted]`. */
  readonly fields: readonly (readonly [string, string])[];
  /** True when field lines past MAX_CAPTURED_HEAD_BYTES were left out. */
  readonly truncated: boolean;
}

/**
 * The captured head from the parsed fields (lower-cased names, values) and
 * the names as sent, index for index (`sentNames` may be shorter or absent:
 * the lower-cased name stands in). Total: any list gives a bounded result.
 */
export function captureHead(fields: readonly (readonly [string, string])[], sentNames: readonly string[] | undefined): CapturedHead {
  const kept: (readonly [string, string])[] = [];
  let bytes = 0;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    if (field === undefined) continue;
    const [lower, raw] = field;
    const name = sentNames?.[i] ?? lower;
    const value = lower === "set-cookie" ? redactCookie(raw) : raw;
    bytes += name.length + value.length + 4;
    if (bytes > MAX_CAPTURED_HEAD_BYTES) return { fields: kept, truncated: true };
    kept.push([name, value]);
  }
  return { fields: kept, truncated: false };
}

/** `id=abc; Path=/; HttpOnly` as `id=[redacted]`: which cookie was set, never its value. */
export function redactCookie(value: string): string {
  const pair = value.split(";", 1)[0] ?? "";
  const equals = pair.indexOf("=");
  const name = (equals === -1 ? "" : pair.slice(0, equals)).trim();
  return `${name}=${REDACTED}`;
}
