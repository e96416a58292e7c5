import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { type CheckSiteResponse, DiagnosticsService, type TraceRedirectsResponse } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { type Credits, creditsOf } from "./credits.js";
import { type Problem, problemOf } from "./problem.js";
import { userAgentField } from "./user-agent-select.js";

export type Operation = "check" | "trace";

export type DiagnosticsClient = Client<typeof DiagnosticsService>;

/** The generated client on the page's own origin, Connect protocol with JSON (connect-web's default). */
export function connectClient(origin: string): DiagnosticsClient {
  return createClient(DiagnosticsService, createConnectTransport({ baseUrl: origin }));
}

export type Answer =
  | { readonly kind: "check"; readonly result: CheckSiteResponse; readonly credits: Credits | undefined }
  | { readonly kind: "trace"; readonly result: TraceRedirectsResponse; readonly credits: Credits | undefined }
  | { readonly kind: "problem"; readonly problem: Problem; readonly credits: Credits | undefined }
  /** The caller's signal aborted the call (Cancel): no answer to show. */
  | { readonly kind: "cancelled" };

/**
 * The service through the generated client, Connect protocol with JSON, on
 * the page's own origin: the page and internal callers share one contract.
 * Every call asks for `details` (timings, certificates) at the same price.
 */
export function createService(client: DiagnosticsClient) {
  // `userAgent`: the "Request as" select's value (browser, googlebot, bingbot). From every region: vantage-service.ts.
  return async (operation: Operation, url: string, key: string, signal?: AbortSignal, userAgent = "browser"): Promise<Answer> => {
    let headers = new Headers();
    const options = { headers: { "x-api-key": key }, onHeader: (received: Headers) => void (headers = received), signal };
    try {
      if (operation === "check") {
        const result = await client.checkSite({ url, details: true, ...userAgentField(userAgent) }, options);
        return { kind: "check", result, credits: creditsOf(headers) };
      }
      const result = await client.traceRedirects({ url, details: true, ...userAgentField(userAgent) }, options);
      return { kind: "trace", result, credits: creditsOf(headers) };
    } catch (error) {
      if (signal?.aborted === true) return { kind: "cancelled" };
      return { kind: "problem", ...problemOf(error) };
    }
  };
}
