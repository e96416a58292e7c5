import type {
  CheckSiteResponse,
  TraceRedirectsResponse,
  VantageDifference,
  VantageOrigin,
  VantagesAsked,
  VantageVerdict,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Credits, creditsOf } from "./credits.js";
import { type Problem, problemOf } from "./problem.js";
import type { DiagnosticsClient, Operation } from "./service.js";
import { userAgentField } from "./user-agent-select.js";

// "From every region" through the streaming call (VantageCheckSite /
// VantageTraceRedirects, announced): the vantages asked and the deadline
// first, then each region's entry as it answers, then the service's verdict.
// The page draws each as it comes (vantages-live.ts) instead of waiting for
// the slowest region's deadline.

/** What the stream says before its end. */
export type VantageEvent =
  | { readonly kind: "asked"; readonly asked: VantagesAsked }
  | {
      readonly kind: "entry";
      readonly vantage: VantageOrigin | undefined;
      readonly data: CheckSiteResponse | TraceRedirectsResponse | undefined;
    };

/** How the stream ended: the service's verdict (its last message), a refusal, or the reader's Cancel. */
export type VantageEnd =
  | {
      readonly kind: "verdict";
      readonly verdict: VantageVerdict;
      readonly differences: readonly VantageDifference[];
      readonly credits: Credits | undefined;
    }
  | { readonly kind: "problem"; readonly problem: Problem; readonly credits: Credits | undefined }
  | { readonly kind: "cancelled" };

/** One message of either stream, as far as the page reads it. */
interface Message {
  readonly asked?: VantagesAsked | undefined;
  readonly entry?:
    | { readonly vantage?: VantageOrigin | undefined; readonly data?: CheckSiteResponse | TraceRedirectsResponse | undefined }
    | undefined;
  readonly verdict?: VantageVerdict | undefined;
  readonly differences: readonly VantageDifference[];
}

export function createVantageService(client: DiagnosticsClient) {
  return async (
    operation: Operation,
    url: string,
    key: string,
    signal: AbortSignal,
    userAgent: string,
    onEvent: (event: VantageEvent) => void,
  ): Promise<VantageEnd> => {
    let headers = new Headers();
    const options = { headers: { "x-api-key": key }, onHeader: (received: Headers) => void (headers = received), signal };
    const request = { url, details: true, vantages: ["all"], announce: true, ...userAgentField(userAgent) };
    try {
      const messages: AsyncIterable<Message> =
        operation === "check" ? client.vantageCheckSite(request, options) : client.vantageTraceRedirects(request, options);
      for await (const message of messages) {
        if (message.asked !== undefined) onEvent({ kind: "asked", asked: message.asked });
        else if (message.entry !== undefined) onEvent({ kind: "entry", vantage: message.entry.vantage, data: message.entry.data });
        else if (message.verdict !== undefined)
          return { kind: "verdict", verdict: message.verdict, differences: message.differences, credits: creditsOf(headers) };
      }
      // The service ends every stream with its verdict; one cut short (a proxy between) has none to show.
      return {
        kind: "problem",
        problem: { title: "The answer was cut short", detail: "The stream ended before the service's verdict.", httpStatus: 0 },
        credits: creditsOf(headers),
      };
    } catch (error) {
      if (signal.aborted) return { kind: "cancelled" };
      return { kind: "problem", ...problemOf(error) };
    }
  };
}
