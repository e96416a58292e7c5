import { type DescService, getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { deriveRoutes, type RouteRule } from "./rest-route-rules.js";

/** One endpoint of the REST door: a GET of a unary method, or a POST of a unary or server-streaming one. */
export type RestRoute = RouteRule;

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
