import { MAX_URL_LENGTH } from "../shared/limits.js";
import { refusal } from "../shared/failures.js";
import type { Prober } from "../probe/hop-types.js";
import type { Overload } from "../probe/overload.js";
import type { PolicyRefusal } from "../shared/failures.js";
import { hasScheme, startingUrlText } from "./starting-url.js";
import { crawlerUserAgent, type UserAgentId } from "../shared/user-agents.js";

// What a caller gives each diagnostic beyond its input, and what it gets back:
// plain data both ways, so a call and its outcome can cross to a diagnostic thread as they are.

/** What both diagnostics take alike. */
interface CallOptions {
  /**
   * When the call's time limits count from, on the shared clock: when it was
   * asked for (the call's arrival at the service, or its hand-over to a
   * diagnostic thread), so the caller hears by its deadline however long the
   * call waited to start. is-site-down: its first request's timeout (later
   * requests count from when they are sent); redirect-check: its whole-trace
   * budget. Undefined: from when the diagnostic starts.
   */
  readonly timeoutsFrom?: number | undefined;
  /**
   * With details: give each request record its `report` (the reason phrase,
   * the Location, the probe's cause) and record the position the diagnostic
   * stopped at without its answer, for a report for people (the CLI's
   * tables). The service never asks: it renders none of it.
   */
  readonly report?: boolean;
  /** Whose User-Agent every request sends (src/shared/user-agents.ts); `browser`, sitediag's own, when undefined. */
  readonly userAgent?: UserAgentId | undefined;
}

export interface SiteCheckOptions extends CallOptions {
  /**
   * Add `details` to the result: every request, the failure code, the proxy,
   * a client-side redirect (which costs reading up to 64 KiB of each body).
   */
  readonly details?: boolean;
}

export interface TraceOptions extends CallOptions {
  /**
   * Add `details` to the result: every request, the failure code, the proxy,
   * and a client-side redirect on the final page (one extra bounded GET of it).
   */
  readonly details?: boolean;
}

/**
 * How both diagnostics end. A `result` whatever the target's state (a down
 * site, a broken chain); `refused` when the caller's starting input may not
 * be visited (a 400 naming the rule: anything that goes wrong later is a
 * result); `cancelled` when the caller's own signal ended the work, so nobody
 * is waiting; `overloaded` when our own capacity kept it from a verdict (it
 * started too late for its full time, or its thread died): retryable, never a
 * word about the target. The service maps each kind to its answer once
 * (service/diagnostic-answer.ts).
 */
export type DiagnosticOutcome<R> =
  | { readonly kind: "result"; readonly result: R }
  | { readonly kind: "refused"; readonly refusal: PolicyRefusal }
  | { readonly kind: "cancelled"; readonly reason: unknown }
  | { readonly kind: "overloaded"; readonly overload: Overload };

// The caller's input, as each diagnostic reads it before anything is sent.

export type ParsedInput = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly refusal: PolicyRefusal };

export interface InputRules {
  /** redirect-check accepts `example.com/path` and starts it at https:// (spec §4.2). */
  readonly allowBareDomain: boolean;
}

/**
 * Turns the caller's string into an absolute http(s) URL, or a refusal naming
 * the rule. Only syntax is judged here; the prober's policy judges the target.
 */
export function parseTargetInput(raw: string, rules: InputRules): ParsedInput {
  const input = raw.trim();
  if (input === "") return refuse("INPUT_MISSING_URL");
  if (input.length > MAX_URL_LENGTH) {
    return refuse("INPUT_URL_TOO_LONG");
  }
  if (!hasScheme(input) && !rules.allowBareDomain) {
    return refuse("INPUT_NOT_ABSOLUTE");
  }
  const candidate = startingUrlText(input);
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return refuse("INPUT_INVALID_URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return refuse("INPUT_SCHEME", `Only http and https URLs can be checked, not ${url.protocol.replace(/:$/, "")}`);
  }
  if (url.hostname === "") return refuse("INPUT_NO_HOST");
  return { ok: true, url };
}

/** The refusal of the row `key` of the one table (src/shared/failures.ts), worded with `reason` where the row needs specifics. */
function refuse(key: `INPUT_${string}`, reason?: string): ParsedInput {
  return { ok: false, refusal: refusal(key, reason) };
}

/** The limits a diagnostic runs under. */
export interface DiagnosticLimits {
  /** is-site-down per-request timeout (spec §4.1: 6 s). */
  readonly siteTimeoutMs: number;
  /** redirect-check per-request timeout (spec §8: 3 s). */
  readonly traceHopTimeoutMs: number;
  /** redirect-check whole-trace budget (spec §8: 30 s). */
  readonly traceTotalTimeoutMs: number;
  /** Ports redirect-check may visit (spec §4.2: 80 and 443). */
  readonly tracePorts: readonly number[];
  /** certificate_expires_soon under this many days left (SITEDIAG_CERT_EXPIRY_WARN_DAYS); DEFAULT_CERT_EXPIRY_WARN_DAYS when unset. */
  readonly certExpiryWarnDays?: number;
  /** domain_expires_soon under this many days left (SITEDIAG_DOMAIN_EXPIRY_WARN_DAYS); DEFAULT_DOMAIN_EXPIRY_WARN_DAYS when unset. */
  readonly domainExpiryWarnDays?: number;
  /** The RDAP bootstrap registry (SITEDIAG_RDAP_BOOTSTRAP_FILE); the shipped snapshot when unset. */
  readonly rdapBootstrapFile?: string;
}

/** What a diagnostic needs from the world: the prober, and the limits in force. */
export interface DiagnosticEnv extends DiagnosticLimits {
  readonly prober: Prober;
}

/** Only the limits of an env (what crosses to a probe thread with each diagnostic). */
export function limitsOf(env: DiagnosticLimits): DiagnosticLimits {
  return {
    siteTimeoutMs: env.siteTimeoutMs,
    traceHopTimeoutMs: env.traceHopTimeoutMs,
    traceTotalTimeoutMs: env.traceTotalTimeoutMs,
    tracePorts: env.tracePorts,
    ...(env.certExpiryWarnDays === undefined ? {} : { certExpiryWarnDays: env.certExpiryWarnDays }),
    ...(env.domainExpiryWarnDays === undefined ? {} : { domainExpiryWarnDays: env.domainExpiryWarnDays }),
    ...(env.rdapBootstrapFile === undefined ? {} : { rdapBootstrapFile: env.rdapBootstrapFile }),
  };
}

/**
 * The env whose prober sends the User-Agent the options name on every
 * request of the diagnostic (its other family's request included); the env
 * itself for `browser`.
 */
export function speakingAs(env: DiagnosticEnv, options: CallOptions): DiagnosticEnv {
  const userAgent = crawlerUserAgent(options.userAgent);
  if (userAgent === undefined) return env;
  const prober = env.prober;
  return Object.assign({}, env, {
    prober: Object.assign({}, prober, {
      hop: (request: Parameters<Prober["hop"]>[0]) => prober.hop(Object.assign({}, request, { userAgent })),
    }),
  });
}
