import type { DescMethod, DescMethodServerStreaming, DescMethodUnary, DescService, Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImpl,
} from "@connectrpc/connect";
import { createAsyncIterable, invokeUnaryImplementation, transformInvokeImplementation } from "@connectrpc/connect/protocol";

/** What a unary call answered: its message and the headers and trailers the interceptors and the service set. */
export interface LocalAnswer {
  readonly message: Message;
  readonly header: Headers;
  readonly trailer: Headers;
}

export interface LocalCallInit {
  /**
   * The call's own controller, which its context signal comes from. The
   * caller aborts it when its client goes; shutdown aborts it; a failing
   * call aborts it with its error, as Connect's handler does.
   */
  readonly controller: AbortController;
  /** Request headers as the interceptors see them (x-api-key, x-request-id). */
  readonly header: Headers;
  readonly contextValues: ContextValues;
}

/**
 * Unary calls made in memory, through the same service implementations and
 * interceptors the router serves on the RPC doors, with no protocol in
 * between: no serialising of the request, no parsing of the answer. It is
 * the unary half of Connect's own handler (a handler context, then
 * Connect's invokeUnaryImplementation with the interceptors) without the
 * wire format around it.
 */
export interface LocalCalls {
  /** Registers a service as the router registers it; call both with the same implementation and interceptors. */
  service<S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>, interceptors: readonly Interceptor[]): void;
  serves(method: DescMethod): boolean;
  /**
   * Rejects with a ConnectError as a Connect client would see it: a thrown
   * non-ConnectError becomes "internal error" (Code.Internal), and its
   * metadata holds the response headers and trailers with the error's own
   * metadata over them.
   */
  call(method: DescMethodUnary, input: Message, init: LocalCallInit): Promise<LocalAnswer>;
  /**
   * A server-streaming call: the answers, and the response headers the
   * interceptors set, which are complete once the first answer (or the
   * error that ends the stream) has come. Errors come as a Connect client
   * would see them, as from `call`.
   */
  stream(method: DescMethodServerStreaming, input: Message, init: LocalCallInit): LocalStream;
}

export interface LocalStream {
  readonly messages: AsyncIterable<Message>;
  readonly header: Headers;
  readonly trailer: Headers;
}

interface Registered {
  readonly spec: MethodImplSpec & { kind: "unary" | "server_streaming" };
  readonly interceptors: Interceptor[];
  readonly url: string;
}

// Interceptors see this as the call's URL: the RPC path, never the REST door's query (it may hold api_key).
const LOCAL_ORIGIN = "http://in-process";

export function createLocalCalls(shutdownSignal: AbortSignal): LocalCalls {
  const methods = new Map<DescMethod, Registered>();
  // Shutdown reaches running calls through this set rather than through a
  // listener per call on the shared signal (what Connect's linked
  // controllers do): one listener in all, and a call costs a Set entry.
  const running = new Set<AbortController>();
  const cancelAll = () => {
    for (const controller of running) controller.abort(shutdownSignal.reason);
  };
  shutdownSignal.addEventListener("abort", cancelAll, { once: true });

  const registeredFor = (method: DescMethod): Registered => {
    const registered = methods.get(method);
    if (registered === undefined) throw new ConnectError(`${method.parent.typeName}.${method.name} is not served here`, Code.Unimplemented);
    return registered;
  };
  // What createHandlerContext builds, minus its deadline timer (a REST call carries no timeout) and linked controllers.
  const handlerContext = (method: DescMethod, registered: Registered, init: LocalCallInit): HandlerContext => {
    if (shutdownSignal.aborted) init.controller.abort(shutdownSignal.reason);
    return {
      service: method.parent,
      method,
      protocolName: "connect",
      requestMethod: "POST",
      url: registered.url,
      signal: init.controller.signal,
      timeoutMs: () => undefined,
      requestHeader: init.header,
      responseHeader: new Headers(),
      responseTrailer: new Headers(),
      values: init.contextValues,
    };
  };

  return {
    service: (service, impl, interceptors) => {
      const specs = createServiceImplSpec(service, impl);
      for (const spec of Object.values(specs.methods)) {
        if (spec.kind !== "unary" && spec.kind !== "server_streaming") continue;
        methods.set(spec.method, { spec, interceptors: [...interceptors], url: `${LOCAL_ORIGIN}/${service.typeName}/${spec.method.name}` });
      }
    },
    serves: (method) => methods.has(method),
    call: async (method, input, init) => {
      const registered = registeredFor(method);
      if (registered.spec.kind !== "unary") throw new ConnectError(`${method.name} is not unary`, Code.Unimplemented);
      const { controller } = init;
      const context = handlerContext(method, registered, init);
      running.add(controller);
      try {
        const message = await invokeUnaryImplementation(registered.spec, context, input, registered.interceptors);
        return { message, header: context.responseHeader, trailer: context.responseTrailer };
      } catch (reason) {
        if (!controller.signal.aborted) controller.abort(reason);
        throw asReceived(reason, context.responseHeader, context.responseTrailer);
      } finally {
        running.delete(controller);
      }
    },
    stream: (method, input, init) => {
      const registered = registeredFor(method);
      const { controller } = init;
      const context = handlerContext(method, registered, init);
      const output = transformInvokeImplementation(registered.spec, context, registered.interceptors)(createAsyncIterable([input]));
      async function* messages(): AsyncGenerator<Message> {
        running.add(controller);
        try {
          yield* output;
        } catch (reason) {
          if (!controller.signal.aborted) controller.abort(reason);
          throw asReceived(reason, context.responseHeader, context.responseTrailer);
        } finally {
          running.delete(controller);
        }
      }
      return { messages: messages(), header: context.responseHeader, trailer: context.responseTrailer };
    },
  };
}

/** The error a Connect client would have decoded from the handler's error response. */
function asReceived(reason: unknown, header: Headers, trailer: Headers): ConnectError {
  const error = reason instanceof ConnectError ? reason : new ConnectError("internal error", Code.Internal, undefined, undefined, reason);
  const metadata = new Headers(header);
  error.metadata.forEach((value, name) => metadata.set(name, value));
  // A stream's trailers restate its usage headers after its refund (access-interceptor.ts): the later figure wins, never both.
  trailer.forEach((value, name) => metadata.set(name, value));
  const received = new ConnectError(error.rawMessage, error.code, metadata, undefined, error.cause);
  received.details.push(...error.details);
  return received;
}
