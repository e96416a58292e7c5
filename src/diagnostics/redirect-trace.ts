import { lookUpRegistration, registrationWithin } from "../registration/registration-lookup.js";
import { DEFAULT_DOMAIN_EXPIRY_WARN_DAYS, registrationWarnings } from "../registration/registration-warnings.js";
import type { AbortWatch } from "../probe/clock.js";
import { REDIRECT_TRACE } from "../shared/limits.js";
import { failureCode, outcomeCause, refusalCause } from "../shared/failures.js";
import { lateStart } from "../probe/overload.js";
import type { ConnectionHandle, HopResponse, PortRule } from "../probe/hop-types.js";
import { cookieKey, createCheckCookies } from "./check-cookies.js";
import { clientRedirectOf, MAX_CLIENT_REDIRECT_BODY_BYTES } from "./client-redirect.js";
import {
  answeredRecord,
  type ClientRedirect,
  type DiagnosticDetails,
  failedRecord,
  type ReportKind,
  type RequestRecord,
  sentRecord,
  stoppedRecord,
} from "./diagnostic-details.js";
import { proxyMatch } from "./proxy-signatures.js";
import { type DiagnosticEnv, parseTargetInput, speakingAs, type TraceOptions } from "./diagnostic-call.js";
import { type SearchSignals, searchSignals, searchWarningTexts } from "./search-signals.js";
import { startTraceBudget, type TraceBudget } from "./redirect-trace-budget.js";
import { chainWarnings, hstsWarnings, isRedirectStatus, loopKey } from "./redirect-chain.js";
import { DEFAULT_CERT_EXPIRY_WARN_DAYS, expiryWatch } from "./certificate-expiry.js";
import { attemptHop, type HopAttempt } from "./redirect-trace-hop.js";
import type { FirstRequest } from "./family-comparison.js";
import { firstHostEvidence, type FirstHostEvidence } from "./first-host-evidence.js";
import { hopRevocationWarnings } from "./revocation-warnings.js";
import { createResolutionBook, resolutionOf, type ResolutionBook } from "./name-resolutions.js";
import {
  type ChainEnding,
  type ChainStatusId,
  type RedirectTraceOutcome,
  type TraceHop,
  traceWarning,
  type TraceWarning,
} from "./redirect-trace-result.js";

export type { TraceOptions } from "./diagnostic-call.js";
export type { ChainStatusId, RedirectTraceOutcome, RedirectTraceResult, TraceHop } from "./redirect-trace-result.js";

/**
 * redirect-check (spec §2.3, §4.2): follows a URL hop by hop with HEAD (GET
 * when HEAD is refused), up to REDIRECT_TRACE.maxRedirects redirects, within
 * a per-request timeout and a whole-trace budget. Refuses only an unusable
 * starting input; everything that goes wrong later is a result.
 */
export async function traceRedirects(
  raw: string,
  callerEnv: DiagnosticEnv,
  signal?: AbortWatch,
  options: TraceOptions = {},
): Promise<RedirectTraceOutcome> {
  const env = speakingAs(callerEnv, options);
  const parsed = parseTargetInput(raw, { allowBareDomain: true });
  if (!parsed.ok) return { kind: "refused", refusal: parsed.refusal };
  const ports: PortRule = { kind: "only", ports: env.tracePorts };
  const screened = env.prober.screen(parsed.url, ports);
  if (screened !== null) return { kind: "refused", refusal: screened };
  // Before any request: a trace that waited too long for its turn could not have its whole budget.
  const late = lateStart(options.timeoutsFrom);
  if (late !== null) return { kind: "overloaded", overload: late };

  const budget = startTraceBudget({ hopTimeoutMs: env.traceHopTimeoutMs, totalTimeoutMs: env.traceTotalTimeoutMs }, signal);
  // With details, the first request over the other IP family, to every address, and the TLS versions: beside the rest of the chain, within the trace's budget.
  const family: { evidence: Promise<FirstHostEvidence> | null } = { evidence: null };
  const onFirst = (first: FirstRequest) => {
    const next = budget.nextRequestTimeoutMs();
    if (next !== null) family.evidence = firstHostEvidence(env.prober, first, { timeoutMs: next.timeoutMs, ports, signal: budget.signal });
  };
  // With details, the first host's registration (src/registration/): asked beside the chain, awaited only a short grace past it.
  const registering = options.details === true ? lookUpRegistration(env.prober, parsed.url.hostname, env.rdapBootstrapFile) : null;
  try {
    const report = options.details === true && options.report === true;
    const resolutions = options.details === true ? createResolutionBook() : null;
    const walk = await walkChain(parsed.url, env, ports, budget, {
      resolutions,
      report,
      onFirst: options.details === true ? onFirst : null,
    });
    if (budget.cancelled()) return { kind: "cancelled", reason: signal?.reason };
    if (walk.kind === "refused" || walk.kind === "overloaded") return walk;
    const { chain, ending } = walk;
    const extra =
      resolutions !== null ? await lookForClientRedirect(walk, env, ports, budget, report ? "final-page" : null, resolutions) : null;
    if (budget.cancelled()) return { kind: "cancelled", reason: signal?.reason };
    const evidence = family.evidence === null ? null : await family.evidence;
    if (budget.cancelled()) return { kind: "cancelled", reason: signal?.reason };
    // Our own delay, not the target's time, ended it: no verdict on the target.
    const overrun = budget.overrun();
    if (overrun !== null) return { kind: "overloaded", overload: overrun };
    const search = extra === null ? null : searchOf(extra, parsed.url, chain);
    const searchWarnings =
      search === null
        ? []
        : searchWarningTexts(search.signals, search.url).map(({ code, message }) => traceWarning(code, message, search.hop));
    const registration = registering === null ? null : await registrationWithin(registering);
    const registered = registrationWarnings(registration, env.domainExpiryWarnDays ?? DEFAULT_DOMAIN_EXPIRY_WARN_DAYS);
    const noticed = [
      ...walk.warnings,
      ...(extra?.warning === undefined || extra.warning === null ? [] : [extra.warning]),
      ...(evidence?.warnings ?? []),
      ...searchWarnings,
      ...registered,
    ];
    // The reason the walk stopped, when it stopped early, is always the last warning.
    const warnings = [
      ...orderWarnings([...noticed, ...chainWarnings(chain, ending), ...hstsWarnings(parsed.url, chain, ending, walk.lastResponse)]),
      ...(walk.stopReason === null ? [] : [walk.stopReason]),
    ];
    const details: DiagnosticDetails | undefined =
      options.details === true
        ? {
            code: walk.code,
            requests: [...walk.records, ...(extra?.record === undefined || extra.record === null ? [] : [extra.record])],
            proxy: walk.lastResponse === null ? null : proxyMatch(walk.lastResponse.status, walk.lastResponse.headers),
            clientRedirect: extra?.clientRedirect ?? null,
            resolutions: resolutions?.list() ?? [],
            families: evidence?.families ?? null,
            addresses: evidence?.addresses ?? null,
            tlsVersions: evidence?.tlsVersions ?? null,
            warnings: [...(evidence?.warnings ?? []), ...searchWarnings, ...registered],
            search: search?.signals ?? null,
            ...(registration === null ? {} : { registration }),
          }
        : undefined;
    return {
      kind: "result",
      result: {
        input: raw,
        redirects: chain.filter((hop) => isRedirectStatus(hop.status)).length,
        finalUrl: ending.finalUrl,
        finalStatus: ending.finalStatus,
        // The budget is wall time on this thread (a limit); the figure is the requests' own time (a measurement):
        // every request of the chain, a HEAD answered before its GET included, not the extra GET of the final page.
        totalTimeMs: budget.requestsMs(),
        chainStatus: ending.status,
        chain,
        warnings,
        // Present only when asked for, so a plain result keeps exactly its shape.
        ...(details === undefined ? {} : { details }),
      },
    };
  } finally {
    // No request of the trace outlives it: an early return still waits for the other family's (its signal ends it with the trace's).
    await family.evidence;
    budget.dispose();
  }
}

type Walk =
  | {
      readonly kind: "walked";
      readonly chain: readonly TraceHop[];
      readonly ending: ChainEnding;
      /** Things noticed along the way, such as a GET fallback. */
      readonly warnings: readonly TraceWarning[];
      /** Why the walk stopped before a final response; null when it reached one. */
      readonly stopReason: TraceWarning | null;
      /** The stable code of how the walk ended badly (src/shared/failures.ts); null when it ended well. */
      readonly code: string | null;
      /** One per position that sent a request, in order: what answered it, or how it failed (with a report, also the position it stopped at). */
      readonly records: readonly RequestRecord[];
      /** The last response of the walk, whatever it was. */
      readonly lastResponse: HopResponse | null;
    }
  | Extract<RedirectTraceOutcome, { kind: "refused" }>
  | Extract<RedirectTraceOutcome, { kind: "overloaded" }>;

interface WalkOptions {
  /** The details' book of lookups when details were asked for (records are made only then); null otherwise. */
  readonly resolutions: ResolutionBook | null;
  readonly report: boolean;
  /** Told what the first position's request came to, when it reached an address (details: the other IP family). */
  readonly onFirst: ((first: FirstRequest) => void) | null;
}

async function walkChain(start: URL, env: DiagnosticEnv, ports: PortRule, budget: TraceBudget, keep: WalkOptions): Promise<Walk> {
  const book = keep.resolutions;
  const withRecords = book !== null;
  const report: ReportKind = keep.report ? "position" : null;
  const chain: TraceHop[] = [];
  const warnings: TraceWarning[] = [];
  const records: RequestRecord[] = [];
  let lastResponse: HopResponse | null = null;
  const visited = new Map<string, string>();
  const expiring = expiryWatch(env.certExpiryWarnDays ?? DEFAULT_CERT_EXPIRY_WARN_DAYS);
  const stop = (status: ChainStatusId, finalUrl: string, stopReason: TraceWarning, code: string): Walk => ({
    kind: "walked",
    chain,
    ending: { status, finalUrl, finalStatus: null },
    warnings,
    stopReason,
    code,
    records,
    lastResponse,
  });

  // A URL asked again with the cookies it set is a new request, as in a browser; asked again with the same cookies, a loop.
  // The key holds a digest of the Cookie header, not its text: small, and no site's values kept beside the chain.
  const cookies = createCheckCookies();
  const visitKey = (url: URL, cookie: string | undefined) => `${loopKey(url)}\n${cookieKey(cookie)}`;
  let target = start;
  // The Cookie header for `target`: read once per hop, for the request and its visit key.
  let cookie = cookies.header(target);
  // The connection the last redirect kept for the next hop, as a browser reuses it.
  let reuse: ConnectionHandle | null = null;
  for (let position = 1; ; position++) {
    visited.set(visitKey(target, cookie), target.href);
    // With details, the final page is asked once more (lookForClientRedirect): its connection is kept for that, as a browser would.
    // The first host's DNSSEC is read too (details only): its HEAD asks, a GET sent in its place finds the same entry.
    const attempt = await attemptHop(env.prober, target, ports, budget, cookie, reuse, withRecords, withRecords && position === 1);
    if (attempt.kind === "response") cookies.take(target, attempt.response);
    if (position === 1 && (attempt.kind === "response" || attempt.kind === "failure"))
      keep.onFirst?.({ url: target, method: attempt.method, outcome: attempt });
    // Our capacity failed it (a probe thread died): no verdict on the chain, and nothing is sent again.
    if (attempt.kind === "overloaded") return { kind: "overloaded", overload: attempt.overload };
    // The HEAD's lookup is booked before its GET's: resolutions are numbered in the order requests used them.
    const headResolution = attempt.kind === "refused" ? attempt.resolution : resolutionOf(attempt.head);
    const headSent = { url: target.href, method: "HEAD" as const, headFallback: false, resolution: book?.add(headResolution) ?? null };
    if (report !== null) {
      const stoppedBy =
        attempt.kind === "refused"
          ? ({ kind: "refused", refusal: attempt.refusal } as const)
          : attempt.kind === "out-of-time"
            ? attempt.head
            : null;
      if (stoppedBy !== null) records.push(stoppedRecord(headSent, stoppedBy));
    } else if (withRecords && attempt.kind === "out-of-time" && attempt.head !== null) {
      // Every request made is in details: the HEAD answered before the budget ran out for its GET too.
      const record = sentRecord(headSent, attempt.head, null);
      if (record !== null) records.push(record);
    }
    // A HEAD whose answer sent a GET to this position is a request of its own: its record comes before the GET's.
    if (withRecords && (attempt.kind === "response" || attempt.kind === "failure") && attempt.head !== null) {
      const record = sentRecord(headSent, attempt.head, report === null ? null : "head-before-get");
      if (record !== null) records.push(record);
    }

    if (attempt.kind === "refused") {
      // A name with no address at all is an unknown host, which the contract
      // answers as a failed chain, not as bad input.
      if (attempt.refusal.rule === "no_address") {
        return stop(
          "request_failed",
          target.href,
          traceWarning("dns_failed", `${target.href} could not be requested: ${attempt.refusal.reason}`),
          failureCode({ cause: "ENODATA", stage: "dns" }),
        );
      }
      // The first target's address is only known after DNS; a private one is
      // still the caller's input being refused, so it stays a 400.
      if (position === 1) return { kind: "refused", refusal: attempt.refusal };
      const from = position - 1;
      return stop(
        "request_failed",
        target.href,
        traceWarning(
          "redirect_target_refused",
          `Hop ${from} redirects to ${target.href}, which is not followed: ${attempt.refusal.reason}`,
          from,
        ),
        refusalCause(attempt.refusal.rule).code,
      );
    }
    if (attempt.kind === "out-of-time") {
      return stop(
        "timeout",
        target.href,
        traceWarning(
          "trace_timeout",
          `The trace used its ${env.traceTotalTimeoutMs} ms budget before ${target.href} could be requested${afterHead(attempt.headNote)}`,
        ),
        outcomeCause("TRACE_TIMEOUT").code,
      );
    }
    const sentResolution = attempt.kind === "response" ? attempt.response.resolution : attempt.trace.resolution;
    const sent = {
      url: target.href,
      method: attempt.method,
      headFallback: attempt.headNote !== null,
      resolution: book?.add(sentResolution) ?? null,
    };
    if (attempt.kind === "failure") {
      if (withRecords) records.push(failedRecord(sent, attempt.failure, attempt.trace, attempt.failure.reason, report));
      return stop(...failureEnding(target, attempt, env));
    }

    // Records are read only by details: a plain trace does not build them.
    if (withRecords) records.push(answeredRecord(sent, attempt.response, report));
    lastResponse = attempt.response;
    const hop = toTraceHop(position, target, attempt.response);
    chain.push(hop);
    warnings.push(...hopRevocationWarnings(position, attempt.response));
    for (const { message } of expiring(target.href, attempt.response.tls, Date.now()))
      warnings.push(traceWarning("certificate_expires_soon", message, position));
    if (attempt.headNote !== null) {
      warnings.push(traceWarning("head_refused_get_used", `${attempt.headNote}; the hop was retried with GET`, position));
    }

    const { response } = attempt;
    if (!isRedirectStatus(response.status)) {
      return {
        kind: "walked",
        chain,
        ending: { status: position === 1 ? "healthy" : "redirects_detected", finalUrl: target.href, finalStatus: response.status },
        warnings,
        stopReason: null,
        code: null,
        records,
        lastResponse,
      };
    }
    if (response.locationHeader === null) {
      return stop(
        "request_failed",
        target.href,
        traceWarning("missing_location", `${hop.redirectType} from ${target.href} has no Location header`, position),
        outcomeCause("REDIRECT_MISSING_LOCATION").code,
      );
    }
    const next = response.location === null ? null : parseUrl(response.location);
    if (next === null) {
      return stop(
        "request_failed",
        target.href,
        traceWarning(
          "invalid_location",
          `${hop.redirectType} from ${target.href} has a Location that is not a usable URL: ${JSON.stringify(response.locationHeader)}`,
          position,
        ),
        outcomeCause("REDIRECT_INVALID_LOCATION").code,
      );
    }
    const nextCookie = cookies.header(next);
    const repeated = visited.get(visitKey(next, nextCookie));
    if (repeated !== undefined) {
      return stop(
        "redirect_loop",
        repeated,
        traceWarning("redirect_loop", `Hop ${position} redirects back to ${repeated}, already in the chain`, position),
        outcomeCause("REDIRECT_LOOP").code,
      );
    }
    // Every hop so far was a redirect, so `position` is also the redirect count.
    if (position > REDIRECT_TRACE.maxRedirects) {
      return stop(
        "too_many_redirects",
        next.href,
        traceWarning("too_many_redirects", `More than ${REDIRECT_TRACE.maxRedirects} redirects; ${next.href} was not requested`),
        outcomeCause("TOO_MANY_REDIRECTS").code,
      );
    }
    target = next;
    cookie = nextCookie;
    reuse = response.keptConnection;
  }
}

function failureEnding(
  target: URL,
  attempt: Extract<HopAttempt, { kind: "failure" }>,
  env: DiagnosticEnv,
): [ChainStatusId, string, TraceWarning, string] {
  const { failure } = attempt;
  const note = afterHead(attempt.headNote);
  if (attempt.timeout === "trace") {
    return [
      "timeout",
      target.href,
      traceWarning(
        "trace_timeout",
        `The trace used its ${env.traceTotalTimeoutMs} ms budget while requesting ${target.href} (${attempt.method})${note}`,
      ),
      outcomeCause("TRACE_TIMEOUT").code,
    ];
  }
  if (attempt.timeout === "request") {
    return [
      "timeout",
      target.href,
      traceWarning("hop_timeout", `${attempt.method} ${target.href} got no response within ${attempt.timeoutMs} ms${note}`),
      failureCode(failure),
    ];
  }
  const code = `${failure.stage}_failed` as const;
  return [
    "request_failed",
    target.href,
    traceWarning(code, `${attempt.method} ${target.href} failed at the ${failure.stage} stage: ${failure.reason}${note}`),
    failureCode(failure),
  ];
}

interface ClientRedirectLook {
  readonly record: RequestRecord | null;
  readonly clientRedirect: ClientRedirect | null;
  readonly warning: TraceWarning | null;
  /** The final page as last read: the extra GET's answer (with its body prefix), or the final hop's when it was not asked or failed. */
  readonly page: HopResponse;
}

/** The search signals of the final page (search-signals.ts), with the hop they concern. */
function searchOf(
  look: ClientRedirectLook,
  start: URL,
  chain: readonly TraceHop[],
): { readonly signals: SearchSignals | null; readonly url: string; readonly hop: number } | null {
  const last = chain.at(-1);
  if (last === undefined) return null;
  const redirects = chain.filter((hop) => isRedirectStatus(hop.status)).length;
  const { page } = look;
  return {
    signals: searchSignals({
      startUrl: start.href,
      url: last.url,
      redirects,
      status: page.status,
      headers: page.headers,
      body: page.bodyPrefix,
    }),
    url: last.url,
    hop: last.hop,
  };
}

/**
 * With details, a chain that ended on a 2xx page is asked once more, with a
 * GET whose body's first 64 KiB are read, for the redirect a browser would
 * make by itself there (spec 4.2.4: reported, not followed). The final hop's
 * own Refresh header counts too. Within the trace's budget, like every request.
 */
async function lookForClientRedirect(
  walk: Extract<Walk, { kind: "walked" }>,
  env: DiagnosticEnv,
  ports: PortRule,
  budget: TraceBudget,
  report: ReportKind,
  book: ResolutionBook,
): Promise<ClientRedirectLook | null> {
  const final = walk.lastResponse;
  const lastHop = walk.chain.at(-1);
  if (walk.stopReason !== null || final === null || lastHop === undefined || final.status < 200 || final.status > 299) return null;
  const fromHead = clientRedirectOf(final.status, final.headers, null, final.url);
  let record: RequestRecord | null = null;
  let found = fromHead;
  let page: HopResponse = final;
  const next = budget.nextRequestTimeoutMs();
  if (found === null && next !== null) {
    const url = new URL(final.url);
    const reuse = final.keptConnection;
    const outcome = await env.prober.hop({
      url,
      method: "GET",
      timeoutMs: next.timeoutMs,
      ports,
      signal: budget.signal,
      bodyPrefixBytes: MAX_CLIENT_REDIRECT_BODY_BYTES,
      captureHead: true,
      describeResolution: true,
      ...(reuse === null ? {} : { reuse }),
    });
    const sent = { url: url.href, method: "GET" as const, headFallback: false, resolution: book.add(resolutionOf(outcome)) };
    if (outcome.kind === "response") {
      record = answeredRecord(sent, outcome.response, report);
      page = outcome.response;
      found = clientRedirectOf(outcome.response.status, outcome.response.headers, outcome.response.bodyPrefix, outcome.response.url);
    } else if (outcome.kind === "failure") {
      record = failedRecord(sent, outcome.failure, outcome.trace, outcome.failure.reason, report);
    }
  }
  const warning =
    found === null
      ? null
      : traceWarning(
          "client_side_redirect_not_followed",
          `${lastHop.url} redirects by itself (${found.kind === "refresh_header" ? "Refresh header" : "meta refresh"}, after ${found.delaySeconds} s) to ${found.url}; not followed`,
          lastHop.hop,
        );
  return { record, clientRedirect: found, warning, page };
}

function parseUrl(text: string): URL | null {
  return URL.canParse(text) ? new URL(text) : null;
}

function afterHead(headNote: string | null): string {
  return headNote === null ? "" : ` (after ${headNote})`;
}

function toTraceHop(position: number, url: URL, response: HopResponse): TraceHop {
  const redirect = isRedirectStatus(response.status);
  const location = redirect ? response.location : null;
  return {
    hop: position,
    url: url.href,
    hostname: url.hostname,
    status: response.status,
    statusText: response.statusText,
    location,
    redirectType: redirect ? `${response.status} ${response.statusText}` : null,
    responseTimeMs: Math.round(response.timings.totalMs),
    upgradedToHttps: url.protocol === "http:" && location !== null && location.startsWith("https:"),
  };
}

/** Per-hop warnings in hop order, then those about the whole chain; ties keep the order they were raised in. */
function orderWarnings(warnings: readonly TraceWarning[]): TraceWarning[] {
  const rank = (warning: TraceWarning) => warning.hop ?? Number.MAX_SAFE_INTEGER;
  return [...warnings].sort((a, b) => rank(a) - rank(b));
}
