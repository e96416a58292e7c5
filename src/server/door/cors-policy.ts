import { cors as connectCors } from "@connectrpc/connect";

/** The CORS headers of every response, and the preflight answer, of the whole port. */
export interface CorsPolicy {
  /** Headers for an actual (non-preflight) response. */
  simpleHeaders(): Headers;
  /** Headers answering an OPTIONS preflight for a resource that allows `methods`. */
  preflightHeaders(methods: readonly string[]): Headers;
}

// Browsers cap the preflight cache (Chromium at two hours); asking for more gains nothing.
const PREFLIGHT_MAX_AGE_SECONDS = 7_200;

/**
 * Any origin may call: the API key travels in a header or the query, never
 * in a cookie, so there is no ambient credential for a foreign page to ride
 * on and `*` is safe. Preflights allow x-api-key and x-request-id beside what
 * Connect and gRPC-Web clients send; responses expose the usage headers,
 * Retry-After and the Connect/gRPC-Web status headers.
 */
export function createCorsPolicy(exposeHeaders: readonly string[]): CorsPolicy {
  // Joined once: every response of the port carries them.
  const allowHeaders = unique(["x-api-key", "x-request-id", ...connectCors.allowedHeaders]).join(", ");
  const expose = unique(["retry-after", "x-request-id", ...exposeHeaders, ...connectCors.exposedHeaders]).join(", ");
  return {
    simpleHeaders: () =>
      new Headers({
        "access-control-allow-origin": "*",
        "access-control-expose-headers": expose,
      }),
    preflightHeaders: (methods) =>
      new Headers({
        "access-control-allow-origin": "*",
        "access-control-allow-methods": methods.join(", "),
        "access-control-allow-headers": allowHeaders,
        "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
        allow: methods.join(", "),
      }),
  };
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names.map((name) => name.toLowerCase()))];
}
