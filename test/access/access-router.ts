import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { CheckSiteResponseSchema, DiagnosticsService, TraceRedirectsResponseSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";
import { createAccessInterceptor, type AccessInterceptorDeps } from "../../src/access/access-interceptor.js";

/** What a call came back with: the usage headers (from response headers or error metadata) and the error, if any. */
export interface CallResult {
  readonly headers: Headers;
  readonly error: ConnectError | undefined;
}

/**
 * DiagnosticsService behind the access interceptor on connect's in-memory
 * router transport, so the interceptor runs exactly as on the server. The
 * handlers stand in for the real ones only as far as access cares: a url
 * of "bad" is refused as invalid, which happens after the charge.
 */
export function accessClient(deps: AccessInterceptorDeps) {
  const transport = createRouterTransport(
    (router) =>
      router.service(DiagnosticsService, {
        checkSite: (request) => {
          if (request.url === "bad") throw new ConnectError("url is not an absolute http(s) URL", Code.InvalidArgument);
          return create(CheckSiteResponseSchema, { requestedUrl: request.url });
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
  return { call };
}
