import { Code, ConnectError } from "@connectrpc/connect";
import { API_KEY_HEADER, digestApiKey, isWellFormedApiKey } from "../../access/api-key.js";
import type { CreditPolicy, Usage } from "../../access/credit-log.js";
import { unauthenticated, unavailableIfStoreDown } from "../../access/key-gate.js";
import type { AccessStore } from "../../access/store.js";
import { usageHeaders } from "../../access/usage-headers.js";
import { API_VERSION } from "../../shared/limits.js";
import {
  answerDefect,
  errorBodyOf,
  httpStatusOf,
  methodNotAllowed,
  type NodeRequest,
  type NodeResponse,
  sendJson,
} from "../door/json-answer.js";
import type { PlainHttpRoute } from "../door/route-table.js";

export const CREDITS_PATH = "/api/v1/credits";

const META = { tool: "credits", version: API_VERSION } as const;

/**
 * GET /api/v1/credits: what the key in `x-api-key` has left, charging
 * nothing, so a caller (the page's Batch tab) can say how many items of a
 * batch fit before it spends a credit. The answer is the usage headers every
 * charged call carries, and the same numbers as JSON data; a key that is
 * missing, malformed, unknown or revoked gets the one 401 every door gives,
 * an unreachable store the 503. Only the header is read: the key never
 * rides in a URL here. Reading costs a key lookup and the window's total,
 * as the key gate's lookup does; nothing is written.
 */
export function creditsRoute(store: AccessStore, policy: CreditPolicy, onDefect: (error: unknown) => void): PlainHttpRoute {
  return {
    path: CREDITS_PATH,
    methods: ["GET"],
    handle: (request, response) => {
      if (request.method !== "GET") return methodNotAllowed(response, ["GET"], new Headers({ "cache-control": "no-store" }), META.tool);
      return answerCredits(request, response, store, policy).catch((error: unknown) => answerDefect(response, error, onDefect));
    },
  };
}

async function answerCredits(request: NodeRequest, response: NodeResponse, store: AccessStore, policy: CreditPolicy): Promise<void> {
  const presented = request.headers[API_KEY_HEADER];
  const key = typeof presented === "string" && isWellFormedApiKey(presented) ? presented : undefined;
  let usage: Usage | undefined;
  try {
    const record = key === undefined ? undefined : await store.findKeyByDigest(digestApiKey(key));
    usage = record === undefined || record.revokedAtMs !== null ? undefined : await store.usage(record.id, policy);
  } catch (error) {
    const refusal = unavailableIfStoreDown(error);
    if (!(refusal instanceof ConnectError)) throw error;
    return refuse(response, refusal);
  }
  if (usage === undefined) return refuse(response, unauthenticated());
  const data = {
    remaining: usage.remaining,
    limit: usage.budget,
    used: usage.used,
    windowSeconds: usage.windowSeconds,
    resetAt: usage.resetAtEpochSeconds,
  };
  const headers = usageHeaders(usage);
  headers.set("cache-control", "no-store");
  sendJson(response, 200, { ok: true, data, meta: { ...META } }, headers);
}

function refuse(response: NodeResponse, error: ConnectError): void {
  const headers = new Headers({ "cache-control": "no-store" });
  if (error.code === Code.Unavailable) headers.set("retry-after", "1");
  sendJson(response, httpStatusOf(error.code), errorBodyOf(error, { ...META }), headers);
}
