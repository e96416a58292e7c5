import {
  ChainStatus,
  type CheckSiteResponse,
  SiteStatus,
  type TraceRedirectsResponse,
  WarningSeverity,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { proxyVerdict } from "../diagnostics/proxy-verdict.js";
import { type ChainStatusName, siteCheckReading, traceReading, type VantageReading } from "../shared/vantage-verdict.js";

// What one vantage's row says, in the words a single answer uses: the word
// (UP, DOWN, or the amber CHALLENGED / BLOCKED of a proxy's gate), why, and
// the code of why. The CLI's rows and the page's read it here, so a row
// never shows less than the same check from one place would ("Healthy 503"
// with no reason). Pure and free of Node: the page bundles it.

export interface VantageRowWords {
  readonly reading: VantageReading;
  readonly word: "UP" | "DOWN" | "CHALLENGED" | "BLOCKED";
  /** The failure or warning code behind the reason (dns_no_such_host, final_status_error); null when there is none. */
  readonly code: string | null;
  /** Why, for a person; null when there is nothing to say (an up answer with nothing amiss). */
  readonly reason: string | null;
}

const CHAIN_IDS: Readonly<Record<ChainStatus, ChainStatusName>> = {
  [ChainStatus.UNSPECIFIED]: "request_failed",
  [ChainStatus.HEALTHY]: "healthy",
  [ChainStatus.REDIRECTS_DETECTED]: "redirects_detected",
  [ChainStatus.REDIRECT_LOOP]: "redirect_loop",
  [ChainStatus.TOO_MANY_REDIRECTS]: "too_many_redirects",
  [ChainStatus.REQUEST_FAILED]: "request_failed",
  [ChainStatus.TIMEOUT]: "timeout",
};

/** A site check's row: a proxy's gate in its own words, a down answer's reason and code, an up answer's 4xx as final_status_error. */
export function siteCheckRowWords(data: CheckSiteResponse): VantageRowWords {
  const status = data.statusCode;
  const reading = siteCheckReading({
    status: data.status === SiteStatus.UP ? "up" : "down",
    statusCode: status ?? null,
    proxyBlocked: data.proxyBlocked,
  });
  const proxy =
    data.details?.proxy !== undefined && status !== undefined
      ? proxyVerdict(data.details.proxy.provider, data.details.proxy.kind, status)
      : null;
  if (reading === "down")
    return { reading, word: "DOWN", code: data.details?.code ?? null, reason: data.reason ?? proxy?.sentence ?? null };
  if (proxy?.gate != null)
    return { reading, word: proxy.gate === "challenged" ? "CHALLENGED" : "BLOCKED", code: null, reason: proxy.sentence };
  if (data.proxyBlocked)
    return { reading, word: "BLOCKED", code: null, reason: `A proxy or CDN answered ${answerWords(status, data.statusText)}` };
  if (status !== undefined && status >= 400) {
    return {
      reading,
      word: reading === "blocked" ? "BLOCKED" : "UP",
      code: "final_status_error",
      reason: `Up, but the final URL answers ${answerWords(status, data.statusText)}`,
    };
  }
  const problem = data.details?.warnings.find((warning) => warning.severity === WarningSeverity.PROBLEM);
  if (problem !== undefined) return { reading, word: "UP", code: problem.code, reason: problem.message };
  return { reading, word: "UP", code: null, reason: proxy?.sentence ?? null };
}

/** A trace's row: a chain that did not end says why (its last warning), a 4xx/5xx at its end is final_status_error, a proxy's gate in its words. */
export function traceRowWords(data: TraceRedirectsResponse): VantageRowWords {
  const chain = CHAIN_IDS[data.chainStatus];
  const status = data.finalStatus;
  const reading = traceReading({ chainStatus: chain, finalStatus: status ?? null });
  const word = reading === "down" ? "DOWN" : reading === "blocked" ? "BLOCKED" : "UP";
  if (chain !== "healthy" && chain !== "redirects_detected") {
    const stop = data.warnings.at(-1);
    const words = chain.replaceAll("_", " ");
    return {
      reading,
      word,
      code: stop?.code ?? chain,
      reason: stop === undefined ? capitalised(words) : `${capitalised(words)}: ${stop.message}`,
    };
  }
  const proxy =
    data.details?.proxy !== undefined && status !== undefined
      ? proxyVerdict(data.details.proxy.provider, data.details.proxy.kind, status)
      : null;
  if (proxy?.gate != null)
    return { reading, word: proxy.gate === "challenged" ? "CHALLENGED" : "BLOCKED", code: "final_status_error", reason: proxy.sentence };
  if (status !== undefined && status >= 400) {
    const reason = `The final URL answers ${answerWords(status, data.chain.at(-1)?.statusText)}`;
    return { reading, word, code: "final_status_error", reason: proxy === null ? reason : `${reason}: ${proxy.sentence}` };
  }
  const problem = data.warnings.find((warning) => warning.severity === WarningSeverity.PROBLEM);
  if (problem !== undefined) return { reading, word, code: problem.code, reason: problem.message };
  return { reading, word, code: null, reason: null };
}

function answerWords(status: number | undefined, text: string | undefined): string {
  if (status === undefined) return "with an error";
  return text === undefined || text === "" ? String(status) : `${status} ${text}`;
}

function capitalised(words: string): string {
  return words.charAt(0).toUpperCase() + words.slice(1);
}
