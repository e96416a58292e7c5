import { STATUS_CODES } from "node:http";
import { isIP } from "node:net";
import type { SecureContext } from "node:tls";
import { Client, errors } from "undici";
import { refusedAddressDetail, type AddressPolicy } from "./address-policy.js";
import { ConnectorError, pinnedConnector } from "./connector.js";
import { describeFailure, errorCodeOf } from "./failure-causes.js";
import type { HopOutcome, HopRequest, HopResponse, HopTimings, PartialTimings } from "./hop-types.js";
import { readBodyPrefix } from "./body-prefix.js";
import { now, startTrace, type HopTrace } from "./hop-trace.js";
import { locationText } from "./location-header.js";
import type { Resolver, ResolvedAddress } from "./resolver.js";
import { effectivePort, hostOf, screenUrl } from "./target-policy.js";

/**
 * What browsers accept for a response head (Chromium: 256 KiB): sites behind
 * apps that set many cookies send 20 KiB and more, and work in every browser.
 * The parser's buffer grows only with the bytes that arrive, so the memory is
 * paid only by servers that send it (at most SITEDIAG_MAX_INFLIGHT x this).
 */
export const DEFAULT_MAX_RESPONSE_HEAD_BYTES = 256 * 1024;

export interface HopDeps {
  readonly addresses: AddressPolicy;
  readonly resolver: Resolver;
  /** Trusts the extra CA beside Node's roots; undefined for Node's default context. */
  readonly secureContext: SecureContext | undefined;
  /** User-Agent and Accept, built once per prober and sent on every hop. */
  readonly requestHeaders: Readonly<Record<string, string>>;
  /** Largest response head read (SITEDIAG_MAX_RESPONSE_HEAD_BYTES); a larger one is a failure. */
  readonly maxResponseHeadBytes: number;
}

/**
 * What ends every hop's client and unread body. Without a reason undici
 * builds a fresh error for each (and Node's streams then capture its stack):
 * work for nobody, since by then the outcome is decided and nothing reads
 * the error. One shared instance of each kind undici would have built keeps
 * the behaviour and drops the cost.
 */
const CLIENT_DONE = new errors.ClientDestroyedError();
const BODY_UNREAD = new errors.RequestAbortedError();

/**
 * One request: screen, resolve once, judge every answer, dial only what was
 * approved, read the head, let go. Never throws.
 */
export async function runHop(request: HopRequest, deps: HopDeps): Promise<HopOutcome> {
  const refusal = screenUrl(request.url, request.ports, deps.addresses);
  if (refusal !== null) return { kind: "refused", refusal };

  const trace = startTrace(now());
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), request.timeoutMs);
  const onOuterAbort = () => deadline.abort();
  request.signal?.addEventListener("abort", onOuterAbort, { once: true });
  if (request.signal?.aborted === true) deadline.abort();
  try {
    return await resolveAndFetch(request, deps, trace, deadline.signal);
  } catch (error) {
    return failure(trace, error, deadline.signal.aborted);
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onOuterAbort);
  }
}

async function resolveAndFetch(request: HopRequest, deps: HopDeps, trace: HopTrace, signal: AbortSignal): Promise<HopOutcome> {
  const host = hostOf(request.url);
  const literal = isIP(host);
  let addresses: readonly ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    const resolution = await deps.resolver.resolve(host, signal);
    if (!resolution.ok) return failure(trace, { code: resolution.code }, signal.aborted);
    trace.dnsDoneAt = now();
    addresses = resolution.addresses;
    // Every answer must pass: one private answer among public ones is how rebinding starts.
    for (const { address } of addresses) {
      const verdict = deps.addresses.judge(address);
      if (!verdict.allowed) {
        return { kind: "refused", refusal: { rule: "non_public_address", reason: `Target ${host} resolves to ${verdict.address}, which is ${refusedAddressDetail(verdict)}` } };
      }
    }
  }
  if (addresses.length === 0) return { kind: "refused", refusal: { rule: "no_address", reason: `Target ${host} resolved to no address` } };
  return fetchHead(request, deps, trace, signal, addresses);
}

async function fetchHead(
  request: HopRequest,
  deps: HopDeps,
  trace: HopTrace,
  signal: AbortSignal,
  addresses: readonly ResolvedAddress[],
): Promise<HopOutcome> {
  const url = request.url;
  const client = new Client(url.origin, {
    connect: pinnedConnector(
      { addresses, port: effectivePort(url), tls: url.protocol === "https:", hostname: hostOf(url), secureContext: deps.secureContext },
      trace,
      deps.addresses,
      signal,
    ),
    pipelining: 1,
    maxHeaderSize: deps.maxResponseHeadBytes,
    // Backstops: the hop's own deadline normally fires first.
    headersTimeout: request.timeoutMs,
    bodyTimeout: request.timeoutMs,
  });
  try {
    const response = await client.request({
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: deps.requestHeaders,
      signal,
    });
    const headAt = now();
    response.body.on("error", () => undefined);
    // Only a bounded prefix, and only when asked: a gigabyte stream costs what is already buffered.
    const wanted = request.bodyPrefixBytes ?? 0;
    const bodyPrefix = wanted > 0 ? await readBodyPrefix(response.body, wanted, signal) : null;
    response.body.destroy(BODY_UNREAD);
    return { kind: "response", response: hopResponse(url, request.method, response, trace, headAt, bodyPrefix) };
  } catch (error) {
    const cause = trace.connectError !== null && !(trace.connectError.error instanceof ConnectorError && trace.connectError.error.code === "ABORTED")
      ? trace.connectError.error
      : error;
    const phase = trace.connectError?.stage ?? trace.phase;
    trace.phase = phase;
    return failure(trace, cause, signal.aborted);
  } finally {
    await client.destroy(CLIENT_DONE).catch(() => undefined);
  }
}

interface HeadData {
  readonly statusCode: number;
  readonly statusText?: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

function hopResponse(url: URL, method: HopRequest["method"], head: HeadData, trace: HopTrace, headAt: number, bodyPrefix: Uint8Array | null): HopResponse {
  const headers: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(head.headers)) if (value !== undefined) headers[name.toLowerCase()] = value;
  const rawLocation = headers.location;
  const firstLocation = rawLocation === undefined ? null : typeof rawLocation === "string" ? rawLocation : (rawLocation[0] ?? null);
  const locationHeader = firstLocation === null ? null : locationText(firstLocation);
  const remote = trace.remote ?? { address: "", family: 4 as const };
  return {
    url: url.href,
    method,
    // undici's Client speaks HTTP/1.1 only, and ALPN offers nothing else.
    httpVersion: "1.1",
    status: head.statusCode,
    statusText: head.statusText !== undefined && head.statusText !== "" ? head.statusText : (STATUS_CODES[head.statusCode] ?? ""),
    headers,
    locationHeader,
    location: resolveLocation(locationHeader, url),
    remoteAddress: remote.address,
    remoteFamily: remote.family,
    timings: timings(trace, headAt),
    tls: trace.tls,
    tlsDetail: trace.tlsDetail,
    bodyPrefix,
  };
}

function resolveLocation(location: string | null, base: URL): string | null {
  if (location === null) return null;
  try {
    return new URL(location, base).href;
  } catch {
    return null;
  }
}

function timings(trace: HopTrace, headAt: number): HopTimings {
  const span = (from: number | null, to: number | null) => (from === null || to === null ? null : round(to - from));
  return {
    totalMs: round(headAt - trace.startedAt),
    dnsMs: span(trace.startedAt, trace.dnsDoneAt),
    connectMs: span(trace.connectStartedAt, trace.tcpConnectedAt) ?? 0,
    tlsMs: span(trace.tcpConnectedAt, trace.tlsDoneAt),
    firstByteMs: span(trace.requestSentAt, trace.firstByteAt ?? headAt) ?? 0,
  };
}

function failure(trace: HopTrace, error: unknown, aborted: boolean): HopOutcome {
  return {
    kind: "failure",
    trace: { remoteFamily: trace.remote?.family ?? null, timings: partialTimings(trace), tls: trace.tlsDetail },
    failure: describeFailure({
      phase: trace.phase,
      code: errorCodeOf(error),
      aborted,
      elapsedMs: round(now() - trace.startedAt),
      remoteAddress: trace.remote?.address ?? null,
    }),
  };
}

/** The phases a failed hop completed; the one it failed in is left null (its time is in elapsedMs). */
function partialTimings(trace: HopTrace): PartialTimings {
  const span = (from: number | null, to: number | null) => (from === null || to === null ? null : round(to - from));
  return {
    dnsMs: span(trace.startedAt, trace.dnsDoneAt),
    connectMs: span(trace.connectStartedAt, trace.tcpConnectedAt),
    tlsMs: span(trace.tcpConnectedAt, trace.tlsDoneAt),
    firstByteMs: span(trace.requestSentAt, trace.firstByteAt),
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
