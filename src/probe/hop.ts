import { STATUS_CODES } from "node:http";
import { isIP } from "node:net";
import type { SecureContext, TLSSocket } from "node:tls";
import { refusedAddressDetail, type AddressPolicy } from "./policy/address-policy.js";
import { openPinned, type PinnedConnection } from "./connect/connector.js";
import { isRedirectStatus, MAX_BODY_PREFIX_BYTES, type ExchangeRequest, type Exchanged } from "./http/exchange-types.js";
import { causeInfo, refusal } from "../shared/failures.js";
import { describeFailure, errorCodeOf, isDefect } from "./failure.js";
import { exchangeHttp1 } from "./http/http1-exchange.js";
import { exchangeHttp2, openHttp2Session } from "./http/http2-exchange.js";
import type { HopOutcome, HopRequest, HopResponse } from "./hop-types.js";
import { hopTimings } from "./hop-timings.js";
import { startTrace, type HopTrace } from "./hop-trace.js";
import { type AbortWatch, createDeadline, fullTimeout, now } from "./clock.js";
import { headerMapOf, headerValue, locationText } from "./http/header-map.js";
import { captureHead } from "./http/head-capture.js";
import { lateStart } from "./overload.js";
import type { DefectReporter } from "./defect-log.js";
import { closeConnection, type ConnectionKeeper, type Keepable, type KeptOrigin, type OpenConnection } from "./http/kept-connections.js";
import type { Resolver, ResolvedAddress } from "./resolver.js";
import { NO_CNAME_WALK } from "./cname-chain.js";
import { explainedByExtendedErrors, hasChainToWalk, withResolution } from "./hop-resolution.js";
import { DNSSEC_NOT_READ } from "./dnssec-query.js";
import { effectivePort, hostOf, screenUrl } from "./policy/target-policy.js";

/**
 * What browsers accept for a response head (Chromium: 256 KiB): sites behind
 * apps that set many cookies send 20 KiB and more, and work in every browser.
 * The parser's buffer grows only with the bytes that arrive, so the memory is
 * paid only by servers that send it (at most SITEDIAG_MAX_INFLIGHT x this).
 */
export const DEFAULT_MAX_RESPONSE_HEAD_BYTES = 256 * 1024;

/** The CAUSES key of a defect of ours met inside a hop (src/shared/failures.ts, code internal_probe_error). */
const INTERNAL_PROBE_ERROR = "INTERNAL_PROBE_ERROR";

export interface HopDeps {
  readonly addresses: AddressPolicy;
  readonly resolver: Resolver;
  /** One context for every HTTPS hop (Node's default trust store, or it and the extra CA); undefined has Node build one per connection. */
  readonly secureContext: SecureContext | undefined;
  /** User-Agent and Accept with lower-case names, built once per prober and sent on every hop. */
  readonly requestHeaders: readonly (readonly [string, string])[];
  /** Largest response head read (SITEDIAG_MAX_RESPONSE_HEAD_BYTES); a larger one is a failure. */
  readonly maxResponseHeadBytes: number;
  /** Connections kept from a same-origin redirect for the check's next hop. */
  readonly keeper: ConnectionKeeper;
  /** Told once per hop that met a defect of ours (internal_probe_error): the log line. */
  readonly reportDefect: DefectReporter;
}

/** A hop's outcome and when it ended on this thread's clock (now()). */
export interface EndedHop {
  readonly outcome: HopOutcome;
  /**
   * When the final response head was read, for a hop that was answered: the
   * site's time ends there, not when this loop got round to the rest of the
   * hop (its headers, keeping or closing the connection, the caller's answer).
   * Otherwise when the hop failed or was refused.
   */
  readonly endedAt: number;
}

/**
 * One request: screen, resolve once, judge every answer, dial only what was
 * approved, read the head, let go. Never throws. Its own deadline ends it on
 * the request's timeout or when the caller's signal aborts.
 */
export async function runHop(request: HopRequest, deps: HopDeps): Promise<EndedHop> {
  const deadline = createDeadline();
  const trace = startTrace(now());
  const onOuterAbort = () => deadline.abort();
  let timer: { clear(): void } | undefined;
  let outcome: HopOutcome;
  // The hop's one fault boundary: whatever is thrown below, from screening to the
  // processing after the answer (listeners end the hop through guarded()), ends as
  // this hop's own failure, and nothing reaches another check, the thread or the process.
  try {
    const refusal = screenUrl(request.url, request.ports, deps.addresses);
    if (refusal !== null) return { outcome: { kind: "refused", refusal }, endedAt: now() };
    // Before any byte is sent: a target is judged only on its full time, so a hop too late for it is our overload.
    const overload = lateStart(request.askedAt);
    if (overload !== null) return { outcome: { kind: "overloaded", overload }, endedAt: now() };
    timer = fullTimeout(request.timeoutMs, () => deadline.abort());
    request.signal?.addEventListener("abort", onOuterAbort, { once: true });
    if (request.signal?.aborted === true) deadline.abort();
    outcome = await resolveAndFetch(request, deps, trace, deadline.signal);
  } catch (error) {
    outcome = failure(trace, error, deadline.signal.aborted);
  } finally {
    timer?.clear();
    request.signal?.removeEventListener("abort", onOuterAbort);
  }
  if (trace.defect !== null) reportDefect(deps, request.url, trace, trace.defect.error);
  return { outcome, endedAt: outcome.kind === "response" && trace.answeredAt !== null ? trace.answeredAt : now() };
}

/** Logs the hop's defect, once, as the hop ends; a reporter that throws is not the hop's concern. */
function reportDefect(deps: HopDeps, url: URL, trace: HopTrace, error: unknown): void {
  try {
    deps.reportDefect({ host: url.hostname, stage: trace.phase, error });
  } catch {
    // The hop has its answer; a log line is all that is lost.
  }
}

async function resolveAndFetch(request: HopRequest, deps: HopDeps, trace: HopTrace, signal: AbortWatch): Promise<HopOutcome> {
  const host = hostOf(request.url);
  const literal = isIP(host);
  if (literal !== 0) return fetchHead(request, deps, trace, signal, [{ address: host, family: literal === 6 ? 6 : 4 }]);
  const resolution = await deps.resolver.resolve(host, signal);
  if (resolution.ok) trace.dnsDoneAt = now();
  // Details' CNAME chain: asked now the DNS phase is over, beside the dial, so none of its time is in the hop's.
  const described = request.describeResolution === true;
  const chain = described && hasChainToWalk(resolution) ? deps.resolver.cnameChain(host, signal) : null;
  const dnssec = described && request.readDnssec === true && hasChainToWalk(resolution) ? deps.resolver.dnssec(host, signal) : null;
  const outcome = resolution.ok
    ? await fetchResolved(request, deps, trace, signal, host, resolution.addresses)
    : failure(trace, { code: resolution.code }, signal.aborted);
  if (!described) return outcome;
  const reading = dnssec === null ? DNSSEC_NOT_READ : await dnssec;
  const explained = resolution.ok ? outcome : explainedByExtendedErrors(outcome, resolution.code, reading);
  return withResolution(explained, trace, host, resolution, chain === null ? NO_CNAME_WALK : await chain, reading);
}

async function fetchResolved(
  request: HopRequest,
  deps: HopDeps,
  trace: HopTrace,
  signal: AbortWatch,
  host: string,
  addresses: readonly ResolvedAddress[],
): Promise<HopOutcome> {
  // Every answer must pass: one private answer among public ones is how rebinding starts.
  for (const { address } of addresses) {
    const verdict = deps.addresses.judge(address);
    if (!verdict.allowed) {
      return {
        kind: "refused",
        refusal: refusal(
          "INPUT_RESOLVES_NON_PUBLIC",
          `Target ${host} resolves to ${verdict.address}, which is ${refusedAddressDetail(verdict)}`,
          verdict.range,
        ),
      };
    }
  }
  if (request.family !== undefined) addresses = addresses.filter(({ family }) => family === request.family);
  if (request.address !== undefined) addresses = addresses.filter(({ address }) => address === request.address);
  // Never a 400: the diagnostics report it as the DNS failure it is, with that row's code.
  if (addresses.length === 0)
    return {
      kind: "refused",
      refusal: { rule: "no_address", code: causeInfo("ENODATA", "dns").code, reason: `Target ${host} resolved to no address` },
    };
  return fetchHead(request, deps, trace, signal, addresses);
}

async function fetchHead(
  request: HopRequest,
  deps: HopDeps,
  trace: HopTrace,
  signal: AbortWatch,
  addresses: readonly ResolvedAddress[],
): Promise<HopOutcome> {
  const url = request.url;
  const reused = takeKept(request, deps, trace, addresses);
  if (reused !== null) {
    const outcome = await exchangeOver(reused, request, deps, trace, signal);
    if (!answeredForTheConnection(outcome, trace, signal)) return outcome;
    Object.assign(trace, { requestSentAt: null, firstByteAt: null, answeredAt: null, remote: null, tls: null, connectionReused: false });
  }
  let connection: OpenConnection;
  try {
    const pinned = await openPinned(
      {
        addresses,
        port: effectivePort(url),
        tls: url.protocol === "https:",
        hostname: hostOf(url),
        secureContext: deps.secureContext,
        certificates: request.captureHead === true ? "chain" : (request.certificates ?? "leaf"),
      },
      trace,
      deps.addresses,
      signal,
    );
    connection = speaking(pinned, url, deps);
  } catch (error) {
    return failure(trace, error, signal.aborted);
  }
  return exchangeOver(connection, request, deps, trace, signal);
}

/** The new connection in the protocol the server chose: HTTP/2 gets its session, which then owns the socket. */
function speaking(pinned: PinnedConnection, url: URL, deps: HopDeps): OpenConnection {
  if (pinned.protocol !== "h2") return { protocol: "http/1.1", socket: pinned.socket };
  const socket = pinned.socket as TLSSocket;
  try {
    return { protocol: "h2", socket, session: openHttp2Session(socket, url, deps.maxResponseHeadBytes) };
  } catch (error) {
    socket.destroy();
    throw error;
  }
}

/**
 * What a kept connection said that is about the connection, not the site, so
 * the request is sent again on a new one, once, as Chromium does
 * (HttpNetworkTransaction): it failed before any byte of an answer (the
 * server closed it as the request went out, its idle timeout racing ours), or
 * it answered 408 Request Timeout (the server timed the idle connection out
 * and said so before it closed). A timeout of our own is not retried.
 */
function answeredForTheConnection(outcome: HopOutcome, trace: HopTrace, signal: AbortWatch): boolean {
  // A defect of ours is not the connection's doing: sent again, it would only be met again.
  if (signal.aborted || trace.defect !== null) return false;
  if (outcome.kind === "failure") return trace.firstByteAt === null;
  // HTTP/2 multiplexes streams and has no need of a 408 for an idle connection: there it is the site's answer.
  return outcome.kind === "response" && outcome.response.status === REQUEST_TIMEOUT && outcome.response.httpVersion !== "2";
}

const REQUEST_TIMEOUT = 408;

/** The connection the previous hop kept, when it may carry this one: same origin, an address this hop's resolution approved. */
function takeKept(request: HopRequest, deps: HopDeps, trace: HopTrace, addresses: readonly ResolvedAddress[]): OpenConnection | null {
  if (request.reuse === undefined) return null;
  const taken = deps.keeper.take(request.reuse, request.url.origin);
  if (taken === null) return null;
  if (!addresses.some(({ address }) => address === taken.kept.remote.address)) {
    closeConnection(taken.connection);
    return null;
  }
  trace.remote = { ...taken.kept.remote };
  trace.tls = taken.kept.tls;
  trace.phase = "http";
  trace.connectionReused = true;
  return taken.connection;
}

/**
 * One request over an open connection, which this hop then keeps for the
 * next (a same-origin redirect that left it reusable) or closes.
 */
async function exchangeOver(
  connection: OpenConnection,
  request: HopRequest,
  deps: HopDeps,
  trace: HopTrace,
  signal: AbortWatch,
): Promise<HopOutcome> {
  const url = request.url;
  let keep = false;
  try {
    const exchange: ExchangeRequest = {
      url,
      method: request.method,
      headers: requestHeaders(deps, request),
      keepAlive: deps.keeper.keeps,
      keepAfterAnswer: request.keepAfterAnswer === true,
      captureHead: request.captureHead === true,
      maxHeadBytes: deps.maxResponseHeadBytes,
      bodyPrefixBytes: bodyPrefixBytes(request),
      signal,
      trace,
    };
    const exchanged =
      connection.protocol === "h2" ? await exchangeHttp2(connection.session, exchange) : await exchangeHttp1(connection.socket, exchange);
    trace.answeredAt = exchanged.headAt;
    // The head's time is read. The rest of the hop waits for the loop's check
    // phase, so that answers which arrived in the same poll (a burst of checks
    // against one site) are each read and timed before any is processed:
    // otherwise the last of a hundred was timed after the other 99's work.
    await afterThisPoll();
    const response = hopResponse(url, request.method, exchanged, trace, request.captureHead === true);
    if (typeof response === "string") return failure(trace, { code: response }, false);
    const keepable = asksHereAgain(response, request) ? keepableOf(connection, exchanged) : null;
    const kept = keepable === null ? null : deps.keeper.keep(keepable, keptOrigin(url, trace));
    keep = kept !== null;
    return { kind: "response", response: Object.assign({}, response, { keptConnection: kept }) };
  } catch (error) {
    return failure(trace, error, signal.aborted);
  } finally {
    // Nothing outlives the hop but a connection kept for the check's next one.
    if (!keep) closeConnection(connection);
  }
}

function afterThisPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Whether the check's next request goes to this origin: a redirect there, or
 * any final answer when the request said the check asks it again
 * (keepAfterAnswer). A redirect elsewhere is never kept.
 */
function asksHereAgain(response: HopResponse, request: HopRequest): boolean {
  if (isRedirectStatus(response.status)) return isSameOriginRedirect(response, request.url);
  return request.keepAfterAnswer === true;
}

/**
 * Whether the connection can carry the check's next request: over HTTP/1.1
 * when the exchange handed over a drain (keep-alive, a body with a known
 * end); over HTTP/2 always, as browsers send every request to an origin on
 * its one session (the answered stream is closed, the session goes on). A
 * keeper that keeps none (reuse off) refuses it there.
 */
function keepableOf(connection: OpenConnection, exchanged: Exchanged): Keepable | null {
  if (connection.protocol === "h2") return connection;
  return exchanged.drain === null ? null : { protocol: "http/1.1", socket: connection.socket, drain: exchanged.drain };
}

/** Fetch's redirect statuses, to a Location on this URL's origin: the next hop of the check goes there. */
function isSameOriginRedirect(response: HopResponse, url: URL): boolean {
  if (response.location === null || !isRedirectStatus(response.status)) return false;
  try {
    return new URL(response.location).origin === url.origin;
  } catch {
    return false;
  }
}

function keptOrigin(url: URL, trace: HopTrace): KeptOrigin {
  return { origin: url.origin, remote: trace.remote ?? { address: "", family: 4 }, tls: trace.tls };
}

function bodyPrefixBytes(request: HopRequest): number {
  const asked = request.bodyPrefixBytes ?? 0;
  return Number.isFinite(asked) && asked > 0 ? Math.min(Math.floor(asked), MAX_BODY_PREFIX_BYTES) : 0;
}

function requestHeaders(deps: HopDeps, request: HopRequest): readonly (readonly [string, string])[] {
  const base =
    request.userAgent === undefined
      ? deps.requestHeaders
      : deps.requestHeaders.map(([name, value]) => [name, name === "user-agent" ? (request.userAgent ?? value) : value] as const);
  if (request.cookie === undefined || request.cookie === "") return base;
  return [...base, ["cookie", request.cookie]];
}

/** The response, or the code of a contradiction a browser refuses (two different Locations). */
function hopResponse(
  url: URL,
  method: HopRequest["method"],
  exchanged: Exchanged,
  trace: HopTrace,
  capture: boolean,
): HopResponse | string {
  const { head } = exchanged;
  const headers = headerMapOf(head.fields);
  const locations = headerValue(headers, "location");
  // Chromium refuses a response whose Location headers disagree (ERR_RESPONSE_HEADERS_MULTIPLE_LOCATION); repeats of one value are harmless.
  if (Array.isArray(locations) && locations.some((value) => value !== locations[0])) return "CONFLICTING_LOCATION";
  const firstLocation = typeof locations === "string" ? locations : (locations?.[0] ?? null);
  const locationHeader = firstLocation === null ? null : locationText(firstLocation);
  const remote = trace.remote ?? { address: "", family: 4 as const };
  return {
    url: url.href,
    method,
    status: head.status,
    statusText: head.statusText !== "" ? head.statusText : (STATUS_CODES[head.status] ?? ""),
    headers,
    headFields: capture ? captureHead(head.fields, head.sentNames) : null,
    locationHeader,
    location: resolveLocation(locationHeader, url),
    remoteAddress: remote.address,
    remoteFamily: remote.family,
    timings: hopTimings(trace, exchanged.headAt, exchanged.headAt),
    tls: trace.tls,
    httpVersion: exchanged.httpVersion,
    bodyPrefix: exchanged.bodyPrefix,
    connectionReused: trace.connectionReused,
    keptConnection: null,
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

/** The hop's failure for what was thrown (or named); a defect of ours is kept on the trace to be logged once, and is never a timeout. */
function failure(trace: HopTrace, error: unknown, aborted: boolean): HopOutcome {
  const defect = isDefect(error);
  if (defect) trace.defect ??= { error };
  const timings = hopTimings(trace, now(), null);
  const elapsedMs = timings.totalMs;
  return {
    kind: "failure",
    trace: { remoteFamily: trace.remote?.family ?? null, timings, tls: trace.tls, connectionReused: trace.connectionReused },
    failure: describeFailure({
      phase: trace.phase,
      code: defect ? INTERNAL_PROBE_ERROR : errorCodeOf(error),
      aborted: aborted && !defect,
      elapsedMs,
      remoteAddress: trace.remote?.address ?? null,
    }),
  };
}
