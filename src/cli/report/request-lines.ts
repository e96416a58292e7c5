import type { CertificateRecord, DiagnosticDetails, RequestRecord, TlsRecord } from "../../diagnostics/diagnostic-details.js";
import type { HopTimings } from "../../probe/hop-types.js";
import { failureStory, formatMs as formatMeasured, formatWholeMs, TIMING_PHASES } from "../../diagnostics/timing-text.js";
import { chainLines } from "./chain-lines.js";
import type { Paint } from "./terminal-text.js";

// What the reports print of the requests a diagnostic made: the cells of a
// request table, the TLS and certificate lines, the summary rows of details.
// Everything here reads `details`: the one record of each request, which the
// API and the page render too (the CLI asks for its report facts).

/** The phase columns every request table shows, which add up to the total (timing-text.ts). */
export const PHASE_HEADINGS = [...TIMING_PHASES.map((phase) => phase.column), "total"] as const;

/** The cells of a row with no request behind it: dashes, then `total` (a contract figure) when there is one. */
export function missingPhaseCells(total = "-"): string[] {
  return [...TIMING_PHASES.map(() => "-"), total];
}

/**
 * A trace's HEADs answered (or failed) before the GET sent in their place,
 * by the index (from 0) of the position whose GET follows them: the table
 * shows each one as a row of its own above that position's, so the rows add
 * up to the total time, which counts them.
 */
export function headsBefore(requests: readonly RequestRecord[]): ReadonlyMap<number, RequestRecord> {
  const heads = new Map<number, RequestRecord>();
  let position = 0;
  for (const request of requests) {
    if (request.report?.kind === "head-before-get") heads.set(position, request);
    else if (isChainPosition(request)) position += 1;
  }
  return heads;
}

/** The row of a HEAD a GET replaced, numbered as the hop it was sent for. */
export function headRow(hop: number, head: RequestRecord, paint: Paint): string[] {
  return [
    paint.dim(String(hop)),
    answerCell(head, paint),
    "HEAD",
    addressCell(head),
    ...phaseCells(head),
    paint.dim(`${head.url} (then GET, below)`),
  ];
}

/** A request that stands for a position of a trace's chain (not a HEAD a GET replaced, not the extra read of the final page). */
export function isChainPosition(request: RequestRecord): boolean {
  const kind = request.report?.kind;
  return kind !== "final-page" && kind !== "head-before-get";
}

/** What a request came to, in a few words: the status line, or how it failed or why it was not sent. */
export function answerCell(request: RequestRecord, paint: Paint): string {
  const report = request.report;
  if (request.failure !== null) {
    const { failure } = request;
    const story = failureStory(failure, request.timings, request.connectionReused);
    return paint.bad(`${failure.timedOut ? "timed out" : "failed"} at ${failure.stage}: ${story} (${report?.cause ?? failure.code})`);
  }
  if (request.status !== null) return paint.status(request.status, `${request.status} ${report?.statusText ?? ""}`);
  return paint.bad(report?.refusal === null || report?.refusal === undefined ? "not sent" : `not sent: ${report.refusal.rule}`);
}

/** The address the request was sent to, when it got that far. */
export function addressCell(request: RequestRecord): string {
  return request.remoteAddress ?? "-";
}

/** The URL requested, with an arrow to where it redirects when it does. */
export function urlCell(url: string, location: string | null, paint: Paint, note = ""): string {
  if (location === null) return url;
  return `${url} ${paint.notice("→")} ${location}${note === "" ? "" : ` ${paint.dim(note)}`}`;
}

/** A measured duration as every view shows it (timing-text.ts); "-" for a phase that did not happen. */
export function formatMs(ms: number | null): string {
  return ms === null ? "-" : formatMeasured(ms);
}

/** Phase cells of one request, adding up to its total: a failure's too, up to the phase it failed in; dashes for a position never sent. */
export function phaseCells(request: RequestRecord | undefined): string[] {
  if (request === undefined || (request.failure === null && request.status === null)) return missingPhaseCells();
  return timingCells(request.timings, request.connectionReused);
}

/** A request over the connection the redirect before it kept says so where its dial would be. */
function timingCells(timings: HopTimings, reused: boolean): string[] {
  return [
    ...TIMING_PHASES.map(({ key }) => (key === "connectMs" && reused ? "reused" : formatMs(timings[key]))),
    formatMs(timings.totalMs),
  ];
}

/**
 * The diagnostic's time as people compare it with the table: with details,
 * the sum of the totals of the requests it counts (every request but a
 * trace's extra read of its final page, and a position never sent), exact to
 * 0.1 ms, so it is the sum of the total column; without, the contract's
 * whole milliseconds (that sum rounded half up).
 */
export function timeCell(wholeMs: number | null, details: DiagnosticDetails | undefined): string {
  // A check that got no response at all has no response time in the contract, and none here.
  if (wholeMs === null) return "-";
  const counted = (details?.requests ?? []).filter(
    (request) => request.report?.kind !== "final-page" && (request.failure !== null || request.status !== null),
  );
  if (counted.length === 0) return formatWholeMs(wholeMs);
  return formatMs(counted.reduce((tenths, request) => tenths + Math.round(request.timings.totalMs * 10), 0) / 10);
}

/** Summary rows from `details`: the failure code, a client-side redirect (the proxy's row is the report's, beside the verdict it must agree with). */
export function detailsRows(details: DiagnosticDetails | undefined, paint: Paint): string[][] {
  if (details === undefined) return [];
  const rows: string[][] = [];
  if (details.code !== null) rows.push(["code", paint.bad(details.code)]);
  const redirect = details.clientRedirect;
  if (redirect !== null) {
    const how = redirect.kind === "refresh_header" ? "Refresh header" : "meta refresh";
    rows.push(["client redirect", paint.warn(`${how} to ${redirect.url} after ${redirect.delaySeconds} s (not followed)`)]);
  }
  return rows;
}

/**
 * One line per distinct certificate the requests were shown (the same leaf,
 * with the same verdict), naming the rows of the table that used it: "hops
 * 1, 2, 3". Whom it names and who issued it, the TLS version, when it
 * expires, and why it failed verification when it did. `requests` are the
 * table's rows, numbered from 1; `noun` names them ("hop", "request").
 */
export function certificateLines(requests: readonly RequestRecord[], noun: string, paint: Paint): string {
  const shown: { readonly tls: TlsRecord; readonly certificate: CertificateRecord; readonly rows: number[] }[] = [];
  requests.forEach((request, index) => {
    const tls = request.tls;
    const certificate = tls?.certificate;
    if (tls === null || certificate === null || certificate === undefined) return;
    const same = shown.find(
      (entry) => entry.certificate.fingerprintSha256 === certificate.fingerprintSha256 && entry.tls.verifyError === tls.verifyError,
    );
    if (same === undefined) shown.push({ tls, certificate, rows: [index + 1] });
    else same.rows.push(index + 1);
  });
  return shown
    .map(({ tls, certificate, rows }) => {
      const verdict = tls.verifyError === null ? "" : `, ${paint.bad(`not trusted: ${tls.verifyError}`)}`;
      const used = `${noun}${rows.length === 1 ? "" : "s"} ${rows.join(", ")}`;
      return `  ${paint.dim("certificate")}  ${describeTls(tls, certificate)}, ${expiry(certificate, paint)}, ${certificate.chainLength === null ? "chain not read" : `chain of ${certificate.chainLength}`}${verdict}  ${paint.dim(`(${used})`)}\n${chainLines(tls, paint)}`;
    })
    .join("");
}

function describeTls(tls: TlsRecord, certificate: CertificateRecord): string {
  return `${certificate.subjectName || "(no subject)"}, issuer ${certificate.issuerName || "(none)"}, ${tls.protocol ?? "TLS not completed"}`;
}

function expiry(certificate: CertificateRecord, paint: Paint): string {
  const day = certificate.validTo.slice(0, 10);
  const days = certificate.daysRemaining;
  if (days < 0) return paint.bad(`expired ${day} (${-days} days ago)`);
  const text = `expires ${day} (in ${days} days)`;
  // Three weeks: the usual warning threshold of certificate monitors.
  return days < 21 ? paint.warn(text) : text;
}

/**
 * `--headers`: each request's response header fields as received (names as
 * the server spelled them, in order; Set-Cookie values redacted to the
 * cookie's name), under a line naming the request as the table does.
 */
export function headerLines(requests: readonly { readonly label: string; readonly request: RequestRecord }[], paint: Paint): string {
  const blocks = requests.flatMap(({ label, request }) => {
    const head = request.responseHead;
    if (head === null) return [];
    const title = `${label}: ${request.method} ${request.url} (${request.status ?? "-"})`;
    const lines = head.fields.map(([name, value]) => `    ${paint.dim(`${name}:`)} ${value}\n`);
    const cut = head.truncated ? `    ${paint.warn("(fields past the first 64 KiB of the head left out)")}\n` : "";
    return [`  ${paint.strong(title)}\n${lines.join("")}${cut}`];
  });
  return blocks.length === 0 ? "" : `\n${paint.dim("response headers")}\n${blocks.join("")}`;
}

/** A check's requests as its table numbers them: "request 1", ... */
export function checkLabels(requests: readonly RequestRecord[]): { readonly label: string; readonly request: RequestRecord }[] {
  return requests.map((request, index) => ({ label: `request ${index + 1}`, request }));
}

/** A trace's requests as its table numbers them: "hop 2", "hop 2 (HEAD, then GET)", and the extra read of the final page. */
export function traceLabels(requests: readonly RequestRecord[]): { readonly label: string; readonly request: RequestRecord }[] {
  let position = 0;
  return requests.map((request) => {
    const kind = request.report?.kind;
    if (kind === "final-page") return { label: "the final page, read again", request };
    if (kind === "head-before-get") return { label: `hop ${position + 1} (HEAD, then GET)`, request };
    position += 1;
    return { label: `hop ${position}`, request };
  });
}
