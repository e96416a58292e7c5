import { type DescMessage, fromJson, type JsonValue, type Message } from "@bufbuild/protobuf";
import type { NodeRequest } from "../json-response.js";
import { requestBody } from "../listener/request-body.js";

/** The request message read from a JSON body, or why there is none (with the HTTP status to answer). */
export type BodyMapping =
  | { readonly ok: true; readonly message: Message }
  | { readonly ok: false; readonly status: 400 | 413; readonly code: "invalid_argument" | "resource_exhausted"; readonly message: string };

/**
 * Reads a POST body of at most `maxBytes` (a declared Content-Length over it
 * is refused before a byte is read; reading stops the moment the limit is
 * passed) and maps it onto the request message as protobuf JSON: field JSON
 * or proto names, unknown fields refused, so a typo is a 400 rather than a
 * silently empty batch.
 */
export async function messageFromBody(schema: DescMessage, request: NodeRequest, maxBytes: number): Promise<BodyMapping> {
  const declared = Number(request.headers["content-length"] ?? NaN);
  if (declared > maxBytes) return tooLarge(maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving this loop stops reading and nothing more: the request stays whole for the 413 (see requestBody).
  for await (const chunk of requestBody(request)) {
    size += chunk.length;
    if (size > maxBytes) return tooLarge(maxBytes);
    chunks.push(chunk);
  }
  let json: JsonValue;
  try {
    json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as JsonValue;
  } catch {
    return { ok: false, status: 400, code: "invalid_argument", message: "the body is not JSON" };
  }
  try {
    return { ok: true, message: fromJson(schema, json) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, status: 400, code: "invalid_argument", message: `the body does not fit ${schema.name}: ${reason}` };
  }
}

function tooLarge(maxBytes: number): BodyMapping {
  return { ok: false, status: 413, code: "resource_exhausted", message: `the body is larger than ${maxBytes} bytes` };
}
