import type { JsonObject } from "./json-value.js";

/**
 * What the REST door adds around every operation and the proto cannot say:
 * API-key schemes, usage headers and error statuses. Kept as data so the
 * document and docs/openapi.md describe the same table.
 */

export const SECURITY_SCHEMES: JsonObject = {
  ApiKeyHeader: {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "API key in the x-api-key request header. Wins when a query key is also given.",
  },
  ApiKeyQuery: {
    type: "apiKey",
    in: "query",
    name: "api_key",
    description: "API key in the api_key query parameter, an alternative to the x-api-key header.",
  },
};

/** Either scheme alone authorises a call. */
export const SECURITY_REQUIREMENT: JsonObject[] = [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }];

export const API_KEY_PARAMETER: JsonObject = {
  name: "api_key",
  in: "query",
  required: false,
  description: "Alternative to the x-api-key header (the header wins when both are present). Required when the header is absent.",
  schema: { type: "string" },
};

const nonNegativeInteger: JsonObject = { type: "integer", minimum: 0 };

/** Usage headers sent with every 200 and 429 (issue 6), then Retry-After. */
const HEADERS = {
  "RateLimit-Policy": {
    description: 'IETF draft quota policy: the credit budget q per rolling window of w seconds, e.g. "credits";q=300;w=86400.',
    schema: { type: "string", pattern: '^"credits";q=\\d+;w=\\d+$' },
  },
  RateLimit: {
    description: 'IETF draft quota state: r credits remaining, t seconds until more credits free up, e.g. "credits";r=298;t=0.',
    schema: { type: "string", pattern: '^"credits";r=\\d+;t=\\d+$' },
  },
  "X-RateLimit-Limit": { description: "Credit budget of the key per rolling window.", schema: nonNegativeInteger },
  "X-RateLimit-Remaining": { description: "Credits still available in the current window.", schema: nonNegativeInteger },
  "X-RateLimit-Used": { description: "Credits charged in the current window.", schema: nonNegativeInteger },
  "X-RateLimit-Reset": { description: "Epoch seconds at which more credits free up.", schema: nonNegativeInteger },
  "Retry-After": { description: "Seconds (rounded up) to wait before retrying.", schema: nonNegativeInteger },
} satisfies Record<string, { description: string; schema: JsonObject }>;

type HeaderName = keyof typeof HEADERS;

const USAGE_HEADERS: readonly HeaderName[] = [
  "RateLimit-Policy",
  "RateLimit",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Used",
  "X-RateLimit-Reset",
];

/**
 * The headers of a response: usage headers and/or Retry-After. Inlined rather
 * than referenced, because whether a header is always sent differs between
 * responses and a $ref cannot carry that.
 */
export function responseHeaders(usage: boolean, retryAfter: "always" | "sometimes" | "never"): JsonObject | undefined {
  const headers: JsonObject = {};
  if (usage) for (const name of USAGE_HEADERS) headers[name] = header(name, true);
  if (retryAfter !== "never") headers["Retry-After"] = header("Retry-After", retryAfter === "always");
  return Object.keys(headers).length === 0 ? undefined : headers;
}

function header(name: HeaderName, required: boolean): JsonObject {
  return { ...HEADERS[name], required };
}

export interface ErrorStatus {
  readonly status: string;
  readonly description: string;
  /** The Connect code name the REST door usually puts in error.code. */
  readonly usualCode: string;
  readonly usageHeaders: boolean;
  readonly retryAfter: "always" | "sometimes" | "never";
}

/**
 * Error statuses of every operation. The body is the error envelope; its
 * error.code is the Connect code name of the error the RPC door would return.
 */
export const ERROR_STATUSES: readonly ErrorStatus[] = [
  {
    status: "400",
    usualCode: "invalid_argument",
    usageHeaders: false,
    retryAfter: "never",
    description:
      "Missing or invalid input, or a blocked target. Credits are still charged (they are charged before parameters are validated).",
  },
  {
    status: "401",
    usualCode: "unauthenticated",
    usageHeaders: false,
    retryAfter: "never",
    description: "Missing, invalid or revoked API key. Nothing is charged.",
  },
  {
    status: "429",
    usualCode: "resource_exhausted",
    usageHeaders: true,
    retryAfter: "sometimes",
    description:
      "The request would exceed the key's available credit budget. Nothing is charged. Retry-After is absent when no wait helps: the request costs more than the key's whole budget.",
  },
  {
    status: "500",
    usualCode: "internal",
    usageHeaders: false,
    retryAfter: "never",
    description: "The service could not complete the check.",
  },
  {
    status: "501",
    usualCode: "unimplemented",
    usageHeaders: false,
    retryAfter: "never",
    description: "The operation is not available on this server build.",
  },
  {
    status: "503",
    usualCode: "unavailable",
    usageHeaders: false,
    retryAfter: "sometimes",
    description:
      "Temporarily unavailable: the credit store is unreachable or the instance is at its cap of in-flight checks. Nothing is charged.",
  },
];

/** The error detail shared by every error envelope. */
export const ERROR_DETAIL_SCHEMA: JsonObject = {
  type: "object",
  description: "What went wrong.",
  required: ["code", "message"],
  properties: {
    code: {
      type: "string",
      description: "Connect error code name in snake_case, e.g. invalid_argument, unauthenticated, resource_exhausted.",
    },
    message: { type: "string", description: "Human-readable explanation." },
  },
  additionalProperties: false,
};

/** The document's introduction: what every route shares. */
export const INTRODUCTION = [
  "The REST GET routes of sitediag, generated from the proto contract (proto/sitediag/v1) by protoc-gen-sitediag-openapi.",
  "Every response is a JSON envelope. A completed diagnostic is HTTP 200 with ok true, the result in data and meta {tool, version}, even when the site is down or the redirect chain is broken. Any other outcome has ok false and error {code, message}.",
  "Every call needs an API key, in the x-api-key header or the api_key query parameter, and costs credits from one budget per key shared by all operations.",
].join("\n\n");
