import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { CheckSiteResponseSchema, CheckSitesResponseSchema, DiagnosticsService, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { createAccessInterceptor, type AccessInterceptorDeps } from "../../src/access/access-interceptor.js";
import { callRefundKey } from "../../src/access/call-price.js";

/** What a call came back with: the usage headers (from response headers or error metadata) and the error, if any. */
export interface CallResult {
  readonly headers: Headers;
  readonly error: ConnectError | undefined;
}

/**
 * DiagnosticsService behind the access interceptor on connect's in-memory
 * router transport, so the interceptor runs exactly as on the server. The
 * handlers stand in for the real ones only as far as access cares: a url
 * of "bad" is refused as invalid, which happens after the charge; a url of
 * "overloaded" is one the service could not run (its price given back, as
 * the service's overload answer does), "overloaded-twice" a handler that
 * says so twice for one diagnostic.
 */
export function accessClient(deps: AccessInterceptorDeps) {
  const transport = createRouterTransport(
    (router) =>
      router.service(DiagnosticsService, {
        checkSite: (request, context) => {
          if (request.url === "bad") throw new ConnectError("url is not an absolute http(s) URL", Code.InvalidArgument);
          if (request.url.startsWith("overloaded")) {
            context.values.get(callRefundKey)?.unit();
            if (request.url === "overloaded-twice") context.values.get(callRefundKey)?.unit();
            throw new ConnectError("could not run", Code.Unavailable);
          }
          return create(CheckSiteResponseSchema, { requestedUrl: request.url });
        },
        checkSites: async function* (request, context) {
          for (const [index, url] of request.urls.entries()) {
            if (url === "overloaded") context.values.get(callRefundKey)?.unit();
            yield create(CheckSitesResponseSchema, { index, url });
          }
        },
        traceRedirects: (request) => {
          if (request.url === "bad") throw new ConnectError("url is not a domain or http(s) URL", Code.InvalidArgument);
          return create(TraceRedirectsResponseSchema, { input: request.url });
        },
      }),
    { router: { interceptors: [createAccessInterceptor(deps)] } },
  );
  const client: Client<typeof DiagnosticsService> = createClient(DiagnosticsService, transport);

  async function call(method: "checkSite" | "traceRedirects", key: string | undefined, url = "https://site.test/"): Promise<CallResult> {
    let headers = new Headers();
    const options = { headers: key === undefined ? {} : { "x-api-key": key }, onHeader: (received: Headers) => (headers = received) };
    try {
      if (method === "checkSite") await client.checkSite({ url }, options);
      else await client.traceRedirects({ url }, options);
      return { headers, error: undefined };
    } catch (error) {
      const connectError = ConnectError.from(error);
      return { headers: connectError.metadata, error: connectError };
    }
  }
  /** A CheckSites call read to its end; its response headers. */
  async function batch(key: string, urls: readonly string[]): Promise<Headers> {
    let headers = new Headers();
    for await (const _item of client.checkSites({ urls: [...urls] }, { headers: { "x-api-key": key }, onHeader: (received: Headers) => (headers = received) })) {
      // Read to the end, as a caller does.
    }
    return headers;
  }
  return { call, batch };
}
