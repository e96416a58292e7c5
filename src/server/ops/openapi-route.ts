import { openApiDocumentJson } from "../../openapi/openapi-document.js";
import type { PlainHttpRoute } from "../http-handler.js";

/**
 * GET /openapi.json: the OpenAPI 3.1 document generated from the proto;
 * public, no key. The document is read and encoded once, here, at start-up:
 * a package installed without gen/ fails to start rather than answer 500.
 */
export function openApiRoute(): PlainHttpRoute {
  const body = Buffer.from(openApiDocumentJson(), "utf8");
  return {
    path: "/openapi.json",
    methods: ["GET", "HEAD"],
    handle: (request, response) => {
      response.setHeader("content-type", "application/json; charset=utf-8");
      response.setHeader("content-length", body.byteLength);
      // The document changes only with a new build: caches may keep it a while.
      response.setHeader("cache-control", "public, max-age=300");
      response.writeHead(200);
      if (request.method === "HEAD") response.end();
      else response.end(body);
    },
  };
}
