import { openApiDocumentJson } from "../openapi/openapi-document.js";
import type { PlainHttpRoute } from "./http-handler.js";

/** GET /openapi.json: the OpenAPI 3.1 document generated from the proto; public, no key. */
export function openApiRoute(documentJson: () => string = openApiDocumentJson): PlainHttpRoute {
  return {
    path: "/openapi.json",
    methods: ["GET", "HEAD"],
    handle: (request, response) => {
      const body = Buffer.from(documentJson(), "utf8");
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
