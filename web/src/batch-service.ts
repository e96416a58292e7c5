import type { BatchEntry } from "./batch-input.js";
import { type BatchRow, checkRow, traceRow } from "./batch-rows.js";
import { type Credits, creditsOf } from "./credits.js";
import { type Problem, problemOf } from "./problem.js";
import type { DiagnosticsClient, Operation } from "./service.js";
import { userAgentField } from "./user-agent-select.js";

export interface BatchHandlers {
  /** The usage headers, as soon as the stream's head arrives (the whole batch is charged up front). */
  credits(credits: Credits | undefined): void;
  /** One item's result, in completion order, by its place in `entries`: how to turn its waiting row into the finished one. */
  item(index: number, finish: (row: BatchRow) => BatchRow): void;
}

/**
 * Runs a batch through CheckSites or TraceRedirectsBatch, handing each item
 * over as it streams in. Resolves when the stream ends; a refusal of the
 * whole batch (401, 429, 400 for too many items, 503) is a problem, as is a
 * stream cut short. Aborting `signal` cancels the stream, and with it the
 * items still running on the server. Every item asks for `details` (same
 * price): a row opens to its chain and waterfall.
 */
export async function runBatch(
  client: DiagnosticsClient,
  operation: Operation,
  entries: readonly BatchEntry[],
  key: string,
  signal: AbortSignal,
  handlers: BatchHandlers,
  userAgent = "browser",
  maxRedirects?: number,
): Promise<{ readonly problem: Problem | undefined; readonly credits: Credits | undefined }> {
  const options = { headers: { "x-api-key": key }, signal, onHeader: (headers: Headers) => handlers.credits(creditsOf(headers)) };
  try {
    if (operation === "check") {
      for await (const item of client.checkSites(
        { urls: entries.map((entry) => entry.url), details: true, ...userAgentField(userAgent) },
        options,
      )) {
        handlers.item(item.index, (row) => checkRow(row, item));
      }
    } else {
      const items = entries.map((entry) => ({
        url: entry.url,
        ...(entry.expectedFinalUrl === undefined ? {} : { expectedFinalUrl: entry.expectedFinalUrl }),
        ...(entry.maxRedirects === undefined ? {} : { maxRedirects: entry.maxRedirects }),
      }));
      for await (const item of client.traceRedirectsBatch({ items, details: true, maxRedirects, ...userAgentField(userAgent) }, options)) {
        handlers.item(item.index, (row) => traceRow(row, item));
      }
    }
    return { problem: undefined, credits: undefined };
  } catch (error) {
    return problemOf(error);
  }
}

/**
 * What the key has left, read from GET /api/v1/credits, which charges
 * nothing (docs/credits.md); undefined when it could not be read (the
 * batch then runs as it would have, and a 429 says what did not fit).
 */
export async function readCredits(key: string, signal: AbortSignal): Promise<Credits | undefined> {
  try {
    const response = await fetch("/api/v1/credits", { headers: { "x-api-key": key }, signal, cache: "no-store" });
    await response.arrayBuffer();
    return response.ok ? creditsOf(response.headers) : undefined;
  } catch {
    return undefined;
  }
}
