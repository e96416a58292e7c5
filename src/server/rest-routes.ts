import { type DescMethodUnary, type DescService, getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/google/api/http_pb.js";

/** One GET endpoint of the REST door, read off a method's google.api.http annotation. */
export interface RestRoute {
  /** The literal path, "/api/v1/is-site-down". */
  readonly path: string;
  /** The envelope's meta.tool: the last segment of the path. */
  readonly tool: string;
  readonly method: DescMethodUnary;
}

/** A google.api.http annotation the REST door cannot serve; start-up stops on it rather than drop a route. */
export class RestRouteError extends Error {
  constructor(
    readonly rpc: string,
    readonly problem: string,
  ) {
    super(`${rpc}: ${problem}`);
    this.name = "RestRouteError";
  }
}

/**
 * Every annotated method of the services becomes a route: adding an RPC with
 * a `get` binding adds a GET endpoint with no other change. The door serves
 * literal GET paths only (no path variables, no bodies); any other binding is
 * refused at start-up so a route never silently goes missing.
 */
export function restRoutesOf(services: readonly DescService[]): RestRoute[] {
  const routes: RestRoute[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!hasOption(method, http)) continue;
      const rpc = `${service.typeName}.${method.name}`;
      if (method.methodKind !== "unary") throw new RestRouteError(rpc, "only unary methods can have a REST binding");
      const unary = method as DescMethodUnary; // methodKind checked just above
      const rule = getOption(method, http);
      for (const binding of [rule, ...rule.additionalBindings]) routes.push(routeFor(rpc, unary, binding));
    }
  }
  const seen = new Set<string>();
  for (const route of routes) {
    if (seen.has(route.path)) throw new RestRouteError(route.method.parent.typeName, `path ${route.path} is bound twice`);
    seen.add(route.path);
  }
  return routes;
}

function routeFor(rpc: string, method: DescMethodUnary, binding: HttpRule): RestRoute {
  if (binding.pattern.case !== "get") throw new RestRouteError(rpc, `only get bindings are served, found ${binding.pattern.case ?? "none"}`);
  const path = binding.pattern.value;
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(path)) throw new RestRouteError(rpc, `path "${path}" is not a literal path (no variables)`);
  const tool = path.slice(path.lastIndexOf("/") + 1);
  return { path, tool, method };
}
