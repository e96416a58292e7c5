import type { RequestRecord } from "../../diagnostics/diagnostic-details.js";
import type { TransportSecurity } from "../../diagnostics/transport-security.js";
import type { Paint } from "./terminal-text.js";

/**
 * One line per distinct transport-security reading of the HTTPS answers
 * (most chains repeat one policy on every hop), naming the rows of the table
 * that sent it, as the certificate lines do:
 *
 *     hsts  max-age=31536000 (365 days), includeSubDomains, preload; HTTP/3 advertised (Alt-Svc h3)  (hops 2, 3)
 *
 * `requests` are the table's rows, numbered from 1; `noun` names them.
 */
export function transportLines(requests: readonly RequestRecord[], noun: string, paint: Paint): string {
  const shown: { readonly text: string; readonly rows: number[] }[] = [];
  requests.forEach((request, index) => {
    if (request.transportSecurity === null) return;
    const text = describeTransport(request.transportSecurity, paint);
    const same = shown.find((entry) => entry.text === text);
    if (same === undefined) shown.push({ text, rows: [index + 1] });
    else same.rows.push(index + 1);
  });
  return shown
    .map(
      ({ text, rows }) => `  ${paint.dim("hsts")}  ${text}  ${paint.dim(`(${noun}${rows.length === 1 ? "" : "s"} ${rows.join(", ")})`)}\n`,
    )
    .join("");
}

/** The policy in the header's own words, then what Alt-Svc said (we report h3, never try it: no QUIC here). */
function describeTransport(transport: TransportSecurity, paint: Paint): string {
  const h3 = transport.h3Advertised ? "; HTTP/3 advertised (Alt-Svc h3, not tried)" : "";
  const { hsts } = transport;
  if (hsts === null) return `${paint.warn(transport.hstsInvalid ? "invalid Strict-Transport-Security, ignored" : "none")}${h3}`;
  const days = Math.floor(hsts.maxAge / 86_400);
  const flags = [hsts.includeSubDomains ? ", includeSubDomains" : "", hsts.preload ? ", preload" : ""].join("");
  return `max-age=${hsts.maxAge} (${days} days)${flags}${h3}`;
}
