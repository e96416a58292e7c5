import type { ContextValues, Transport } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalClientFn, type UniversalHandler } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";

/**
 * A Connect transport that calls the router's own handlers in memory, the
 * way @connectrpc/connect's createRouterTransport does, with one difference:
 * each transport carries server-side context values into the handler
 * (createRouterTransport offers no way to). The REST door uses one per
 * request, so its calls pass through the very handlers, interceptors and
 * error handling that serve Connect, gRPC and gRPC-Web, and still say which
 * door they came through.
 */
export function createInProcessTransport(handlers: ReadonlyMap<string, UniversalHandler>, contextValues: ContextValues): Transport {
  const httpClient: UniversalClientFn = async (request) => {
    const path = new URL(request.url).pathname;
    const handler = handlers.get(path);
    if (handler === undefined) throw new Error(`no handler for ${path}`);
    const response = await handler({
      httpVersion: "1.1",
      method: request.method,
      url: request.url,
      header: request.header,
      body: request.body ?? createAsyncIterable([]),
      signal: request.signal ?? new AbortController().signal,
      contextValues,
    });
    return {
      status: response.status,
      header: new Headers(response.header),
      body: response.body ?? createAsyncIterable([]),
      trailer: new Headers(response.trailer),
    };
  };
  return createTransport({
    httpClient,
    baseUrl: "http://in-process",
    useBinaryFormat: true,
    interceptors: [],
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    readMaxBytes: Number.MAX_SAFE_INTEGER,
    writeMaxBytes: Number.MAX_SAFE_INTEGER,
  });
}
