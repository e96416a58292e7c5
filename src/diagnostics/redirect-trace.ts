import { REDIRECT_TRACE } from "../limits.js";
import type { HopResponse, PortRule } from "../probe/hop-types.js";
import { createCheckCookies } from "./check-cookies.js";
import type { DiagnosticEnv } from "./diagnostic-env.js";
import { startTraceBudget, type TraceBudget } from "./redirect-trace-budget.js";
import { chainWarnings } from "./redirect-trace-chain-warnings.js";
import { attemptHop, type HopAttempt } from "./redirect-trace-hop.js";
import type { ChainEnding, ChainStatusName, RedirectTraceOutcome, TraceHop } from "./redirect-trace-types.js";
import { isRedirectStatus, loopKey } from "./redirect-trace-url.js";
import { parseTargetInput } from "./target-input.js";
import { traceWarning, type TraceWarning } from "./warnings.js";

export type { ChainStatusName, RedirectTraceOutcome, RedirectTraceResult, TraceHop } from "./redirect-trace-types.js";

/**
 * redirect-check (spec §2.3, §4.2): follows a URL hop by hop with HEAD (GET
 * when HEAD is refused), up to REDIRECT_TRACE.maxRedirects redirects, within
 * a per-request timeout and a whole-trace budget. Refuses only an unusable
 * starting input; everything that goes wrong later is a result.
 */
export async function traceRedirects(raw: string, env: DiagnosticEnv, signal?: AbortSignal): Promise<RedirectTraceOutcome> {
  const parsed = parseTargetInput(raw, { allowBareDomain: true });
  if (!parsed.ok) return { kind: "refused", refusal: parsed.refusal };
  const ports: PortRule = { kind: "only", ports: env.tracePorts };
  const screened = env.prober.screen(parsed.url, ports);
  if (screened !== null) return { kind: "refused", refusal: screened };

  const budget = startTraceBudget({ hopTimeoutMs: env.traceHopTimeoutMs, totalTimeoutMs: env.traceTotalTimeoutMs }, signal);
  try {
    const walk = await walkChain(parsed.url, env, ports, budget);
    if (budget.cancelled()) return { kind: "cancelled", reason: signal?.reason };
    if (walk.kind === "refused") return walk;
    const { chain, ending } = walk;
    // The reason the walk stopped, when it stopped early, is always the last warning.
    const warnings = [...orderWarnings([...walk.warnings, ...chainWarnings(chain, ending)]), ...(walk.stopReason === null ? [] : [walk.stopReason])];
    return {
      kind: "result",
      result: {
        input: raw,
        redirects: chain.filter((hop) => isRedirectStatus(hop.status)).length,
        finalUrl: ending.finalUrl,
        finalStatus: ending.finalStatus,
        totalTimeMs: Math.round(budget.elapsedMs()),
        chainStatus: ending.status,
        chain,
        warnings,
      },
    };
  } finally {
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
    }
  | Extract<RedirectTraceOutcome, { kind: "refused" }>;

async function walkChain(start: URL, env: DiagnosticEnv, ports: PortRule, budget: TraceBudget): Promise<Walk> {
  const chain: TraceHop[] = [];
  const warnings: TraceWarning[] = [];
  const visited = new Map<string, string>();
  const stop = (status: ChainStatusName, finalUrl: string, stopReason: TraceWarning): Walk => ({
    kind: "walked",
    chain,
    ending: { status, finalUrl, finalStatus: null },
    warnings,
    stopReason,
  });

  // A URL asked again with the cookies it set is a new request, as in a browser; asked again with the same cookies, a loop.
  const cookies = createCheckCookies();
  const visitKey = (url: URL) => `${loopKey(url)}\n${cookies.header(url) ?? ""}`;
  let target = start;
  for (let position = 1; ; position++) {
    visited.set(visitKey(target), target.href);
    const attempt = await attemptHop(env.prober, target, ports, budget, cookies.header(target));
    if (attempt.kind === "response") cookies.take(target, attempt.response);

    if (attempt.kind === "refused") {
      // A name with no address at all is an unknown host, which the contract
      // answers as a failed chain, not as bad input.
      if (attempt.refusal.rule === "no_address") {
        return stop("Request failed", target.href, traceWarning("dns_failed", `${target.href} could not be requested: ${attempt.refusal.reason}`));
      }
      // The first target's address is only known after DNS; a private one is
      // still the caller's input being refused, so it stays a 400.
      if (position === 1) return { kind: "refused", refusal: attempt.refusal };
      const from = position - 1;
      return stop("Request failed", target.href, traceWarning("redirect_target_refused", `Hop ${from} redirects to ${target.href}, which is not followed: ${attempt.refusal.reason}`, from));
    }
    if (attempt.kind === "out-of-time") {
      return stop("Timeout", target.href, traceWarning("trace_timeout", `The trace used its ${env.traceTotalTimeoutMs} ms budget before ${target.href} could be requested${afterHead(attempt.headNote)}`));
    }
    if (attempt.kind === "failure") return stop(...failureEnding(target, attempt, env));

    const hop = toTraceHop(position, target, attempt.response);
    chain.push(hop);
    if (attempt.headNote !== null) {
      warnings.push(traceWarning("head_refused_get_used", `${attempt.headNote}; the hop was retried with GET`, position));
    }

    const { response } = attempt;
    if (!isRedirectStatus(response.status)) {
      return { kind: "walked", chain, ending: { status: position === 1 ? "Healthy" : "Redirects detected", finalUrl: target.href, finalStatus: response.status }, warnings, stopReason: null };
    }
    if (response.locationHeader === null) {
      return stop("Request failed", target.href, traceWarning("missing_location", `${hop.redirectType} from ${target.href} has no Location header`, position));
    }
    const next = response.location === null ? null : parseUrl(response.location);
    if (next === null) {
      return stop("Request failed", target.href, traceWarning("invalid_location", `${hop.redirectType} from ${target.href} has a Location that is not a usable URL: ${JSON.stringify(response.locationHeader)}`, position));
    }
    const repeated = visited.get(visitKey(next));
    if (repeated !== undefined) {
      return stop("Redirect loop", repeated, traceWarning("redirect_loop", `Hop ${position} redirects back to ${repeated}, already in the chain`, position));
    }
    // Every hop so far was a redirect, so `position` is also the redirect count.
    if (position > REDIRECT_TRACE.maxRedirects) {
      return stop("Too many redirects", next.href, traceWarning("too_many_redirects", `More than ${REDIRECT_TRACE.maxRedirects} redirects; ${next.href} was not requested`));
    }
    target = next;
  }
}

function failureEnding(target: URL, attempt: Extract<HopAttempt, { kind: "failure" }>, env: DiagnosticEnv): [ChainStatusName, string, TraceWarning] {
  const { failure } = attempt;
  const note = afterHead(attempt.headNote);
  if (attempt.timeout === "trace") {
    return ["Timeout", target.href, traceWarning("trace_timeout", `The trace used its ${env.traceTotalTimeoutMs} ms budget while requesting ${target.href} (${attempt.method})${note}`)];
  }
  if (attempt.timeout === "request") {
    return ["Timeout", target.href, traceWarning("hop_timeout", `${attempt.method} ${target.href} got no response within ${attempt.timeoutMs} ms${note}`)];
  }
  const code = `${failure.stage}_failed` as const;
  return ["Request failed", target.href, traceWarning(code, `${attempt.method} ${target.href} failed at the ${failure.stage} stage: ${failure.reason}${note}`)];
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
