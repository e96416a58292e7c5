import type { DescMethod } from "@bufbuild/protobuf";
// A type only: the OpenAPI plugin shares this file and must load nothing from gen/ (buf empties it before plugins run).
import type { HttpRule } from "../../../gen/google/api/http_pb.js";

/** One endpoint of the REST door, read off a google.api.http binding. */
export interface RouteRule {
  readonly method: DescMethod;
  readonly verb: "GET" | "POST";
  /** The literal path, "/api/v1/is-site-down". */
  readonly path: string;
  /** The envelope's meta.tool: the last segment of the path. */
  readonly tool: string;
  /** A server-streaming method: answered as NDJSON, one envelope per message, each written as it comes. */
  readonly streaming: boolean;
}

/** A binding the REST door cannot serve, and why. */
export interface RouteProblem {
  /** "sitediag.v1.DiagnosticsService.CheckSite" */
  readonly rpc: string;
  readonly problem: string;
}

/**
 * The one reading of google.api.http for this project, used by the server's
 * routes and by the OpenAPI generator, so the two can never disagree. Every
 * binding (additional ones too) of every annotated method becomes a route:
 *   - `get` with no body: a unary method, its request fields from the query;
 *   - `post` with body "*": a unary or server-streaming method, its request
 *     message as the JSON body (streamed answers as NDJSON).
 * Paths are literal (no template variables). Anything else, and a verb and
 * path bound twice, is a problem: the caller stops rather than drop a route.
 * `httpRule` reads the option, so the plugin can pass its own reader.
 */
export function deriveRoutes(
  methods: readonly DescMethod[],
  httpRule: (method: DescMethod) => HttpRule | undefined,
): { readonly routes: RouteRule[]; readonly problems: RouteProblem[] } {
  const routes: RouteRule[] = [];
  const problems: RouteProblem[] = [];
  const seen = new Set<string>();
  for (const method of methods) {
    const rule = httpRule(method);
    if (rule === undefined) continue;
    const rpc = `${method.parent.typeName}.${method.name}`;
    for (const binding of [rule, ...rule.additionalBindings]) {
      const route = routeOf(method, binding);
      if (typeof route === "string") {
        problems.push({ rpc, problem: route });
        continue;
      }
      const key = `${route.verb} ${route.path}`;
      if (seen.has(key)) {
        problems.push({ rpc, problem: `${key} is bound twice` });
        continue;
      }
      seen.add(key);
      routes.push(route);
    }
  }
  return { routes, problems };
}

const LITERAL_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

/** The route of one binding, or why there is none. */
function routeOf(method: DescMethod, binding: HttpRule): RouteRule | string {
  const { pattern, body } = binding;
  if (pattern.case !== "get" && pattern.case !== "post") return `only get and post bindings are served, found ${pattern.case ?? "none"}`;
  const path = pattern.value;
  if (!LITERAL_PATH.test(path)) return `path "${path}" is not a literal path (no variables)`;
  const tool = path.slice(path.lastIndexOf("/") + 1);
  if (pattern.case === "get") {
    if (method.methodKind !== "unary") return "only unary methods can have a get binding";
    if (body !== "") return `a get binding has no body, found body "${body}"`;
    return { method, verb: "GET", path, tool, streaming: false };
  }
  if (method.methodKind !== "unary" && method.methodKind !== "server_streaming")
    return "only unary and server-streaming methods can have a post binding";
  if (body !== "*") return `a post binding takes the whole request as its body ("*"), found "${body}"`;
  return { method, verb: "POST", path, tool, streaming: method.methodKind === "server_streaming" };
}
