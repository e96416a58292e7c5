import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import type { Config } from "../config.js";
import { unauthenticated, unavailableIfStoreDown } from "./access-errors.js";
import { API_KEY_HEADER, digestApiKey, isWellFormedApiKey } from "./api-key.js";
import type { CreditPolicy, Usage } from "./credit-log.js";
import { type Price, priceOf } from "./method-costs.js";
import type { AccessStore, ChargeOutcome } from "./store.js";
import { setUsageHeaders, usageHeaders } from "./usage-headers.js";

export interface AccessInterceptorDeps {
  /** Where keys and charges live. */
  readonly store: AccessStore;
  /** SITEDIAG_CREDIT_BUDGET and SITEDIAG_CREDIT_WINDOW_SECONDS. */
  readonly config: Pick<Config, "creditBudget" | "creditWindowSeconds">;
  /** The price of a call by method name and request message; defaults to the §8 costs of DiagnosticsService (a batch pays per item). */
  readonly priceOf?: (methodName: string, message: Message) => Price | undefined;
}

/**
 * Authenticates the `x-api-key` request header and charges the method's cost
 * before the handler runs, in the order the contract sets: no valid key ->
 * Unauthenticated (401) and nothing charged; cost above what is left ->
 * ResourceExhausted (429) and nothing charged; otherwise charged, and only
 * then does the handler validate its parameters, so a bad url still costs.
 * The REST door turns `api_key` into this header, so both doors share it.
 */
export function createAccessInterceptor(deps: AccessInterceptorDeps): Interceptor {
  const policy: CreditPolicy = { budget: deps.config.creditBudget, windowSeconds: deps.config.creditWindowSeconds };
  const price = deps.priceOf ?? priceOf;
  return (next) => async (original) => {
    // A server-streaming call's one request message arrives as a stream; it is read here, where its size sets its price.
    const { req, message } = await withRequestMessage(original);
    const priced = price(req.method.name, message);
    // A method without a cost must not run for free; this is a wiring mistake, not the caller's.
    if (priced === undefined) throw new ConnectError(`no credit cost is defined for ${req.method.name}`, Code.Internal);
    if (priced.kind === "unpriced") throw new ConnectError(priced.reason, Code.InvalidArgument);
    const cost = priced.credits;
    const presented = req.header.get(API_KEY_HEADER);
    if (presented === null || !isWellFormedApiKey(presented)) throw unauthenticated();

    const outcome = await chargeOrUnavailable(deps.store, digestApiKey(presented), cost, policy);
    if (outcome.kind === "unauthenticated") throw unauthenticated();
    if (outcome.kind === "rejected") throw exhausted(cost, outcome.usage, outcome.retryAfterSeconds);

    try {
      const res = await next(req);
      setUsageHeaders(res.header, outcome.usage);
      return res;
    } catch (error) {
      // The call was charged even though it failed (a bad url is a 400 that still costs): say what is left.
      if (error instanceof ConnectError) setUsageHeaders(error.metadata, outcome.usage);
      throw error;
    }
  };
}

/**
 * The call with its request message in hand. Unary calls have it already;
 * a server-streaming call has exactly one, delivered as a stream, which is
 * read (Connect has bounded it by the message size limit) and handed on as
 * a fresh stream of that one message.
 */
async function withRequestMessage(req: UnaryRequest | StreamRequest): Promise<{ readonly req: UnaryRequest | StreamRequest; readonly message: Message }> {
  if (!req.stream) return { req, message: req.message };
  const messages: Message[] = [];
  for await (const message of req.message) messages.push(message);
  const [only] = messages;
  if (only === undefined || messages.length > 1) throw new ConnectError(`${req.method.name} takes exactly one request message`, Code.InvalidArgument);
  return { req: Object.assign({}, req, { message: createAsyncIterable([only]) }), message: only };
}

async function chargeOrUnavailable(store: AccessStore, digest: string, cost: number, policy: CreditPolicy): Promise<ChargeOutcome> {
  try {
    return await store.charge(digest, cost, policy);
  } catch (error) {
    throw unavailableIfStoreDown(error);
  }
}

function exhausted(cost: number, usage: Usage, retryAfterSeconds: number | null): ConnectError {
  const window = `the rolling ${usage.windowSeconds}-second window`;
  if (retryAfterSeconds === null) {
    // Only possible when the configured budget is smaller than one call; waiting a whole window is the honest hint.
    const message = `this call costs ${cost} credits, more than the whole budget of ${usage.budget} per ${window}; it can never be afforded`;
    return new ConnectError(message, Code.ResourceExhausted, usageHeaders(usage, usage.windowSeconds));
  }
  const message =
    `this call costs ${cost} credits but ${usage.remaining} of ${usage.budget} are left in ${window}; ` +
    `it becomes affordable in ${retryAfterSeconds} seconds`;
  return new ConnectError(message, Code.ResourceExhausted, usageHeaders(usage, retryAfterSeconds));
}
