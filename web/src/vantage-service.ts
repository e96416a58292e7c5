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
    onCredits: (credits: Credits) => void,
  ): Promise<VantageEnd> => {
    let headers = new Headers();
    let trailers = new Headers();
    // The head's credits are what was charged up front (every region asked); they show while the stream runs.
    const onHeader = (received: Headers) => {
      headers = received;
      const charged = creditsOf(headers);
      if (charged !== undefined) onCredits(charged);
    };
    const options = { headers: { "x-api-key": key }, onHeader, onTrailer: (received: Headers) => void (trailers = received), signal };
    const request = { url, details: true, vantages: ["all"], announce: true, ...userAgentField(userAgent) };
    // The trailers restate the credits once the regions that did not answer are refunded; a service without them leaves the head's.
    const settled = () => creditsOf(trailers) ?? creditsOf(headers);
    let last: Message | undefined;
    try {
      const messages: AsyncIterable<Message> =
        operation === "check" ? client.vantageCheckSite(request, options) : client.vantageTraceRedirects(request, options);
      // Read to the stream's end, past the verdict (its last message): only the end carries the trailers.
      for await (const message of messages) {
        if (message.asked !== undefined) onEvent({ kind: "asked", asked: message.asked });
        else if (message.entry !== undefined) onEvent({ kind: "entry", vantage: message.entry.vantage, data: message.entry.data });
        else if (message.verdict !== undefined) last = message;
      }
      if (last?.verdict !== undefined) return { kind: "verdict", verdict: last.verdict, differences: last.differences, credits: settled() };
      // The service ends every stream with its verdict; one cut short (a proxy between) has none to show.
      return {
        kind: "problem",
        problem: { title: "The answer was cut short", detail: "The stream ended before the service's verdict.", httpStatus: 0 },
        credits: settled(),
      };
    } catch (error) {
      if (signal.aborted) return { kind: "cancelled" };
      // A verdict in hand stands even if what followed it broke: only its end's credits are missing.
      if (last?.verdict !== undefined)
        return { kind: "verdict", verdict: last.verdict, differences: last.differences, credits: creditsOf(headers) };
      return { kind: "problem", ...problemOf(error) };
    }
  };
}
