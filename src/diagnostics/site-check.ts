import type { AbortWatch } from "../probe/clock.js";
import { SITE_CHECK } from "../shared/limits.js";
import { createCheckCookies } from "./check-cookies.js";
import type { ConnectionHandle, HopOutcome, HopResponse, PortRule } from "../probe/hop-types.js";
import { type DiagnosticEnv, parseTargetInput, type SiteCheckOptions, speakingAs } from "./diagnostic-call.js";
import { searchSignals, searchWarningTexts } from "./search-signals.js";
import { TRACE_WARNING_SEVERITY } from "./redirect-trace-result.js";
import { failureCode, outcomeCause, refusalCause, type FailureStage, type PolicyRefusal } from "../shared/failures.js";
import { clientRedirectOf, MAX_CLIENT_REDIRECT_BODY_BYTES } from "./client-redirect.js";
import {
  answeredRecord,
  type DiagnosticDetails,
  failedRecord,
  type RequestRecord,
  requestTenths,
  stoppedRecord,
  wholeMs,
} from "./diagnostic-details.js";
import { proxyBlockingProvider, proxyMatch } from "./proxy-signatures.js";
import { firstHostEvidence, type FirstHostEvidence, withFirstHostEvidence } from "./first-host-evidence.js";
import { createResolutionBook, resolutionOf } from "./name-resolutions.js";
import { siteCheckWarnings } from "./site-check-warnings.js";
import { lookUpRegistration, type PendingRegistration, registrationWithin } from "../registration/registration-lookup.js";
import { withRegistration } from "../registration/registration-details.js";
import { isRedirectStatus } from "./redirect-chain.js";
import {
  NO_ADDRESS_REASON,
  REDIRECT_DEFECT_CODES,
  REDIRECT_DEFECT_REASONS,
  type RedirectDefect,
  failureReason,
  redirectRefusalReason,
  serverErrorReason,
  tooManyRedirectsReason,
  type SiteCheckOutcome,
  type SiteCheckResult,
  type SiteRedirectHop,
} from "./site-check-result.js";

export type { SiteCheckOptions } from "./diagnostic-call.js";

/** is-site-down may visit any port but the ones browsers refuse (WHATWG Fetch "bad ports"). */
const FETCH_SAFE: PortRule = { kind: "fetch-safe" };

const NO_ADDRESS_CODE = failureCode({ cause: "ENODATA", stage: "dns" });

/**
 * Is this site up or down, and why (spec §2.2, §4.1)? GETs the URL, following
 * redirects for at most SITE_CHECK.maxRequests requests, each limited to
 * env.siteTimeoutMs. Never throws for the target's sake: a down target is a
 * result, and a check `signal` ended is `cancelled` (the same dialect as
 * redirect-check). Throws only when the prober breaks.
 */
export async function checkSite(
  raw: string,
  env: DiagnosticEnv,
  signal?: AbortWatch,
  options: SiteCheckOptions = {},
): Promise<SiteCheckOutcome> {
  const family: FamilyStart = { evidence: null, registration: null };
  const outcome = await checkRequests(raw, speakingAs(env, options), signal, options, family);
  // Awaited whatever the outcome, so no request of the check outlives it; it ends with the same signal.
  const evidence = family.evidence === null ? null : await family.evidence;
  // The caller left while the other family's request was out: as anywhere else in the check, nobody is there for the result.
  if (family.evidence !== null && signal?.aborted === true) return { kind: "cancelled", reason: signal.reason };
  if (outcome.kind !== "result" || outcome.result.details === undefined) return outcome;
  // The registry's answer if it came by now (or within a short grace): never the check's own time.
  const registration = family.registration === null ? null : await registrationWithin(family.registration);
  const details = withRegistration(withFirstHostEvidence(outcome.result.details, evidence), registration, env.domainExpiryWarnDays);
  return { kind: "result", result: Object.assign({}, outcome.result, { details }) };
}

/** What runs beside the check's requests (details only): the other family's, every address's and the TLS versions' requests, once the first request has ended; the first host's registration lookup. */
interface FamilyStart {
  evidence: Promise<FirstHostEvidence> | null;
  registration: PendingRegistration | null;
}

async function checkRequests(
  raw: string,
  env: DiagnosticEnv,
  signal: AbortWatch | undefined,
  options: SiteCheckOptions,
  family: FamilyStart,
): Promise<SiteCheckOutcome> {
  const start = screenInput(raw, env);
  if (!start.ok) return { kind: "refused", refusal: start.refusal };

  const details = options.details === true;
  const report = details && options.report === true ? "position" : null;
  const run = createRun(raw, start.url.href, details, env.certExpiryWarnDays);
  const cookies = createCheckCookies();
  let url = start.url;
  // The connection the last redirect kept for this check's next request, as a browser reuses it.
  let reuse: ConnectionHandle | null = null;
  // The input passed the policy's screen: its domain's registration is asked beside the requests (src/registration/).
  if (details) family.registration = lookUpRegistration(env.prober, url.hostname, env.rdapBootstrapFile);
  for (let request = 1; ; request += 1) {
    const cookie = cookies.header(url);
    const outcome = await env.prober.hop({
      url,
      method: "GET",
      timeoutMs: env.siteTimeoutMs,
      ports: FETCH_SAFE,
      signal,
      // Without details the answer says nothing of a certificate: the verdict on it is all a hop reads (details' captureHead reads the chain).
      certificates: "verdict",
      ...(cookie === undefined ? {} : { cookie }),
      ...(reuse === null ? {} : { reuse }),
      ...(request === 1 && options.timeoutsFrom !== undefined ? { askedAt: options.timeoutsFrom } : {}),
      // Which GET is the last is known only from its status, so each reads a bounded prefix.
      ...(details ? { bodyPrefixBytes: MAX_CLIENT_REDIRECT_BODY_BYTES, captureHead: true, describeResolution: true } : {}),
      // The first host's DNSSEC state and Extended DNS Errors: one more query, details only (src/probe/dnssec-query.ts).
      ...(details && request === 1 ? { readDnssec: true } : {}),
    });
    // Whoever gave the signal has gone: there is nobody to tell the result to.
    if (signal?.aborted === true) return { kind: "cancelled", reason: signal.reason };
    // Our delay, not the site's: no verdict, and no request of this check is sent again.
    if (outcome.kind === "overloaded") return { kind: "overloaded", overload: outcome.overload };
    run.spent(outcome);
    // Beside the rest of the check, which it never delays: a redirect's next request goes out at once.
    if (details && request === 1 && (outcome.kind === "response" || outcome.kind === "failure")) {
      family.evidence = firstHostEvidence(
        env.prober,
        { url, method: "GET", outcome },
        { timeoutMs: env.siteTimeoutMs, ports: FETCH_SAFE, signal },
      );
    }
    if (outcome.kind === "response") cookies.take(url, outcome.response);
    const sent = {
      url: url.href,
      method: "GET" as const,
      headFallback: false,
      resolution: details ? run.resolutions.add(resolutionOf(outcome)) : null,
    };

    if (outcome.kind === "refused") {
      if (report !== null) run.records.push(stoppedRecord(sent, outcome));
      if (outcome.refusal.rule === "no_address") return run.failed(url, "dns", NO_ADDRESS_REASON, NO_ADDRESS_CODE);
      // The first target is the caller's input: refusing it is a 400, not a down site.
      if (request === 1) return { kind: "refused", refusal: outcome.refusal };
      return run.failed(url, "http", redirectRefusalReason(outcome.refusal.rule), refusalCause(outcome.refusal.rule).code);
    }
    if (outcome.kind === "failure") {
      const reason = failureReason(outcome.failure, env.siteTimeoutMs);
      if (details) run.records.push(failedRecord(sent, outcome.failure, outcome.trace, reason, report));
      return run.failed(url, outcome.failure.stage, reason, failureCode(outcome.failure));
    }

    const response = outcome.response;
    // Records are read only by details: a plain check does not build them.
    if (details) run.records.push(answeredRecord(sent, response, report));
    // Only Fetch's redirect statuses are followed, and only these keep a check from being `up`.
    if (!isRedirectStatus(response.status)) return run.answered(response);
    run.redirects.push({ url: response.url, status: response.status });
    if (request >= SITE_CHECK.maxRequests)
      return run.unresolved(response, tooManyRedirectsReason(SITE_CHECK.maxRequests), outcomeCause("TOO_MANY_REDIRECTS").code);
    const next = redirectTarget(response);
    if (!next.ok) return run.unresolved(response, REDIRECT_DEFECT_REASONS[next.defect], REDIRECT_DEFECT_CODES[next.defect]);
    url = next.url;
    reuse = response.keptConnection;
  }
}

type Screened = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly refusal: PolicyRefusal };

function screenInput(raw: string, env: DiagnosticEnv): Screened {
  const parsed = parseTargetInput(raw, { allowBareDomain: false });
  if (!parsed.ok) return parsed;
  const refusal = env.prober.screen(parsed.url, FETCH_SAFE);
  return refusal === null ? parsed : { ok: false, refusal };
}

type RedirectTarget = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly defect: RedirectDefect };

function redirectTarget(response: HopResponse): RedirectTarget {
  if (response.locationHeader === null) return { ok: false, defect: "missingLocation" };
  if (response.location === null) return { ok: false, defect: "unparsableLocation" };
  let url: URL;
  try {
    url = new URL(response.location);
  } catch {
    return { ok: false, defect: "unparsableLocation" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, defect: "nonHttpLocation" };
  return { ok: true, url };
}

type FirstHostFields = keyof Omit<FirstHostEvidence, "warnings">;

/** The state of one check, and the three ways it can end. */
function createRun(requestedUrl: string, startUrl: string, withDetails: boolean, certExpiryWarnDays: number | undefined) {
  // The time of the requests themselves (their timings' totals, each read by
  // the loop that ran it): a check that waited for this thread, between hops
  // or for a slot, is not reported slower than the site answered; and the
  // figure is the sum of the totals its details show.
  let requestsTenths = 0;
  const redirects: SiteRedirectHop[] = [];
  const records: RequestRecord[] = [];
  const resolutions = createResolutionBook();

  const elapsed = () => wholeMs(requestsTenths);
  const redirectHops = () => (redirects.length === 0 ? null : [...redirects]);
  // Present only when asked for, so a plain result keeps exactly its shape.
  // Details are worked out only when asked for: a plain check would match the proxy signatures for nothing.
  // The first host's evidence (families, addresses, TLS versions) and its warnings are added once its requests are back (checkSite).
  const checked = (
    result: SiteCheckResult,
    details: () => Omit<DiagnosticDetails, FirstHostFields | "requests" | "resolutions" | "warnings">,
  ): SiteCheckOutcome => {
    if (!withDetails) return { kind: "result", result };
    const made = details();
    // The search signals concern the final answer: the last request made.
    const searchWarnings = searchWarningTexts(made.search, result.finalUrl ?? requestedUrl).map(({ code, message }) => ({
      code,
      message,
      hop: records.length,
      severity: TRACE_WARNING_SEVERITY[code],
    }));
    const warnings = [...siteCheckWarnings(records, certExpiryWarnDays), ...searchWarnings];
    return {
      kind: "result",
      result: Object.assign({}, result, {
        details: Object.assign({}, made, {
          requests: [...records],
          resolutions: resolutions.list(),
          families: null,
          addresses: null,
          tlsVersions: null,
          warnings,
        }),
      }),
    };
  };
  const answerDetails = (
    response: HopResponse,
    code: string | null,
  ): Omit<DiagnosticDetails, FirstHostFields | "requests" | "resolutions" | "warnings"> => ({
    code,
    proxy: proxyMatch(response.status, response.headers),
    clientRedirect: isRedirectStatus(response.status)
      ? null
      : clientRedirectOf(response.status, response.headers, response.bodyPrefix, response.url),
    search: isRedirectStatus(response.status)
      ? null
      : searchSignals({
          startUrl,
          url: response.url,
          redirects: redirects.length,
          status: response.status,
          headers: response.headers,
          body: response.bodyPrefix,
        }),
  });

  return {
    redirects,
    records,
    resolutions,

    spent(outcome: HopOutcome): void {
      requestsTenths += requestTenths(outcome);
    },

    /** The last response is not a redirect: up below 500, down from 500. */
    answered(response: HopResponse): SiteCheckOutcome {
      const provider = proxyBlockingProvider(response.status, response.headers);
      const down = response.status >= 500;
      return checked(
        {
          requestedUrl,
          redirectHops: redirectHops(),
          finalUrl: response.url,
          status: down ? "down" : "up",
          statusCode: response.status,
          statusText: response.statusText,
          responseTime: elapsed(),
          reason: down ? serverErrorReason(response.status, response.statusText) : null,
          failedStage: down ? "http" : null,
          proxyBlocked: provider !== null,
          proxyProvider: provider,
        },
        () => answerDetails(response, down ? outcomeCause("SERVER_ERROR").code : null),
      );
    },

    /** The last response is a redirect that cannot or may not be followed. */
    unresolved(response: HopResponse, reason: string, code: string): SiteCheckOutcome {
      return checked(
        {
          requestedUrl,
          redirectHops: redirectHops(),
          finalUrl: response.url,
          status: "down",
          statusCode: response.status,
          statusText: response.statusText,
          responseTime: elapsed(),
          reason,
          failedStage: "http",
          proxyBlocked: false,
          proxyProvider: null,
        },
        () => answerDetails(response, code),
      );
    },

    /**
     * No response from `url`. On the first request nothing at all was received,
     * so the contract wants every response field null (§4.1 behaviour 3); after
     * redirects, finalUrl names the URL that failed and responseTime still counts.
     */
    failed(url: URL, stage: FailureStage, reason: string, code: string): SiteCheckOutcome {
      const afterRedirects = redirects.length > 0;
      return checked(
        {
          requestedUrl,
          redirectHops: redirectHops(),
          finalUrl: afterRedirects ? url.href : null,
          status: "down",
          statusCode: null,
          statusText: null,
          responseTime: afterRedirects ? elapsed() : null,
          reason,
          failedStage: stage,
          proxyBlocked: false,
          proxyProvider: null,
        },
        () => ({ code, proxy: null, clientRedirect: null, search: null }),
      );
    },
  };
}
