import { type DescService, getOption, hasOption } from "@bufbuild/protobuf";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { BATCH } from "../../shared/limits.js";
import type { CallRoute } from "../../service/call.js";
import type { NodeRequest, NodeResponse } from "./json-answer.js";
import { deriveRoutes, type RouteRule } from "./rest-route-rules.js";

/** One endpoint of the REST door: a GET of a unary method, or a POST of a unary or server-streaming one. */
export type RestRoute = RouteRule;

/** A google.api.http annotation the REST door cannot serve; start-up stops on it rather than drop a route. */
class RestRouteError extends Error {
  constructor(
    readonly rpc: string,
    readonly problem: string,
  ) {
    super(`${rpc}: ${problem}`);
    this.name = "RestRouteError";
  }
}

/**
 * A plain HTTP endpoint beside the doors (GET /openapi.json, GET /metrics).
 * The handler gets CORS, an OPTIONS preflight, and a 405 with Allow for
 * methods it does not list.
 */
export interface PlainHttpRoute {
  /** Literal path, "/metrics". */
  readonly path: string;
  /** Methods served, e.g. ["GET", "HEAD"]. */
  readonly methods: readonly string[];
  handle(request: NodeRequest, response: NodeResponse): void | Promise<void>;
}

/** A diagnostic operation a path serves: what admission weighs and what the Call names. */
export interface DiagnosticRoute extends CallRoute {
  /** In-flight slots a call holds: one, or for a batch as many items as it runs at once. */
  readonly weight: number;
}

/** What a request path is, decided once per request from the table. */
export type Route =
  /** /healthz and /readyz, the plain-HTTP probes. */
  | { readonly kind: "probe"; readonly path: string }
  | { readonly kind: "plain"; readonly plain: PlainHttpRoute }
  | { readonly kind: "rest"; readonly rest: RestRoute; readonly diagnostic: DiagnosticRoute }
  /** A path of Connect's router; `diagnostic` is null for health and reflection, which need no admission. */
  | { readonly kind: "rpc"; readonly handler: UniversalHandler; readonly diagnostic: DiagnosticRoute | null };

export interface RouteTableOptions {
  /** Connect's handlers, one per RPC path, as the router registered them. */
  readonly rpcHandlers: readonly UniversalHandler[];
  /** The service whose calls are diagnostics (admitted, observed, given a Call). */
  readonly diagnostics: DescService;
  /** Extra plain endpoints; their paths must not collide with the probes, REST routes or RPC paths. */
  readonly plainRoutes: readonly PlainHttpRoute[];
}

/**
 * Every path the port serves, built once at start-up: the REST routes read
 * off the proto's google.api.http annotations, the RPC paths of Connect's
 * router, the probes and the plain endpoints. The listener (to name a
 * refused request's tool), the router, admission and the request observer
 * all ask it; none derives routes of its own.
 */
export interface RouteTable {
  /** The route of a request path (pathOf), or undefined when nothing is served there. */
  routeOf(path: string): Route | undefined;
  /** The REST tool a path belongs to, so an answer given before routing (414, a head the parser refuses) can name it. */
  toolOf(path: string): string | null;
  /** Every REST route, for the checks made at start-up. */
  readonly restRoutes: readonly RestRoute[];
}

const PROBE_PATHS: readonly string[] = ["/healthz", "/readyz"];

export function createRouteTable(options: RouteTableOptions): RouteTable {
  const routes = new Map<string, Route>();
  for (const handler of options.rpcHandlers) {
    const diagnostic =
      handler.service === options.diagnostics ? diagnosticRoute(handler.method.name, null, handler.method.methodKind === "unary") : null;
    routes.set(handler.requestPath, { kind: "rpc", handler, diagnostic });
  }
  const restRoutes = restRoutesOf([...new Set(options.rpcHandlers.map((handler) => handler.service))]);
  for (const rest of restRoutes)
    routes.set(rest.path, { kind: "rest", rest, diagnostic: diagnosticRoute(rest.method.name, rest.tool, !rest.streaming) });
  for (const path of PROBE_PATHS) routes.set(path, { kind: "probe", path });
  for (const plain of options.plainRoutes) {
    if (routes.has(plain.path)) throw new Error(`plain route ${plain.path} collides with a built-in route`);
    routes.set(plain.path, { kind: "plain", plain });
  }
  return {
    routeOf: (path) => routes.get(path),
    toolOf: (path) => {
      const route = routes.get(path);
      return route?.kind === "rest" ? route.rest.tool : null;
    },
    restRoutes,
  };
}

/**
 * The path of a request target: up to its query, never parsed further (it
 * may be over a limit, and a URL parser would normalise what the caller
 * sent). The one reading of a path for every part of the port.
 */
export function pathOf(target: string): string {
  const end = target.indexOf("?");
  return end === -1 ? target : target.slice(0, end);
}

function diagnosticRoute(operation: string, tool: string | null, unary: boolean): DiagnosticRoute {
  return { operation, tool, weight: unary ? 1 : BATCH.concurrency };
}

/**
 * Every annotated method of the services becomes a route (rest-route-rules.ts
 * says which bindings are served): adding an RPC with a binding adds an
 * endpoint with no other change. Any binding the door cannot serve stops
 * start-up, so a route never silently goes missing.
 */
export function restRoutesOf(services: readonly DescService[]): RestRoute[] {
  const { routes, problems } = deriveRoutes(
    services.flatMap((service) => service.methods),
    (method) => (hasOption(method, http) ? getOption(method, http) : undefined),
  );
  const [first] = problems;
  if (first !== undefined) throw new RestRouteError(first.rpc, first.problem);
  return routes;
}
