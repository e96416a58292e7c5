import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import type { Config } from "../config.js";
import { unauthenticated, unavailableIfStoreDown } from "./key-gate.js";
import { API_KEY_HEADER, digestApiKey, isWellFormedApiKey } from "./api-key.js";
import type { CreditPolicy, Usage } from "./credit-log.js";
import { callRefundKey, type Price, priceOf, refundTab } from "./call-price.js";
import type { AccessStore, ChargeOutcome, ChargeReceipt } from "./store.js";
import { creditRefusal } from "./credit-refusal.js";
import { setUsageHeaders } from "./usage-headers.js";

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
 * A diagnostic the service then could not run for its own reasons (overload,
 * a dead probe thread) is given back (call-price.ts): once the call is over,
 * in one store write; a unary call's usage headers, and a stream's trailers, say what is left after it.
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
    if (outcome.kind === "rejected") throw creditRefusal(priced, outcome.usage, outcome.retryAfterSeconds);

    const tab = refundTab(cost, priced.units);
    req.contextValues.set(callRefundKey, tab);
    // What the call's diagnostics could not run is given back once, when it is over; the usage then says what is left.
    const settle = async () =>
      tab.owed() === 0 ? outcome.usage : refund(deps.store, outcome.receipt, outcome.keyId, tab.owed(), policy, outcome.usage);
    try {
      const res = await next(req);
      if (!res.stream) {
        setUsageHeaders(res.header, await settle());
        return res;
      }
      // A stream's head goes out before its items run: it says what was charged. What comes back is settled
      // before its end is written, and its trailers say what is left then, under the same names.
      setUsageHeaders(res.header, outcome.usage);
      return Object.assign({}, res, {
        message: refundingAfter(res.message, async () => void setUsageHeaders(res.trailer, await settle())),
      });
    } catch (error) {
      // The call was charged even though it failed (a bad url is a 400 that still costs): say what is left.
      const usage = await settle();
      if (error instanceof ConnectError) setUsageHeaders(error.metadata, usage);
      throw error;
    }
  };
}

/**
 * Gives `credits` of the call's charge back and reads the key's standing
 * after it. A store that fails here keeps the charge (the caller paid for a
 * call that got a 503): nothing is refunded twice, and the answer the caller
 * is owed is not held back for it; the store metric counts the failed refund.
 */
async function refund(
  store: AccessStore,
  receipt: ChargeReceipt,
  keyId: string,
  credits: number,
  policy: CreditPolicy,
  charged: Usage,
): Promise<Usage> {
  try {
    await store.refund(receipt, credits);
    return await store.usage(keyId, policy);
  } catch {
    return charged;
  }
}

/**
 * A stream's messages as they come, then the refund once it has ended (however it ended: done, failed, or its
 * caller gone). Connect writes a stream's end (its trailers, with an error or none) only once this has returned.
 */
async function* refundingAfter<T>(messages: AsyncIterable<T>, settle: () => Promise<unknown>): AsyncIterable<T> {
  try {
    yield* messages;
  } finally {
    await settle();
  }
}

/**
 * The call with its request message in hand. Unary calls have it already;
 * a server-streaming call has exactly one, delivered as a stream, which is
 * read (Connect has bounded it by the message size limit) and handed on as
 * a fresh stream of that one message.
 */
async function withRequestMessage(
  req: UnaryRequest | StreamRequest,
): Promise<{ readonly req: UnaryRequest | StreamRequest; readonly message: Message }> {
  if (!req.stream) return { req, message: req.message };
  const messages: Message[] = [];
  for await (const message of req.message) messages.push(message);
  const [only] = messages;
  if (only === undefined || messages.length > 1)
    throw new ConnectError(`${req.method.name} takes exactly one request message`, Code.InvalidArgument);
  return { req: Object.assign({}, req, { message: createAsyncIterable([only]) }), message: only };
}

async function chargeOrUnavailable(store: AccessStore, digest: string, cost: number, policy: CreditPolicy): Promise<ChargeOutcome> {
  try {
    return await store.charge(digest, cost, policy);
  } catch (error) {
    throw unavailableIfStoreDown(error);
  }
}
