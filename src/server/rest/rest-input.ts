import {
  type DescEnum,
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
  protoInt64,
  ScalarType,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import type { NodeRequest } from "../door/json-answer.js";
import { requestBody } from "../door/request-body.js";
import { restValueOf } from "./rest-render.js";

/** The request message built from a query string, and the first problem met on the way, if any. */
export interface QueryMapping {
  readonly message: Message;
  /** Why some parameter could not be used (given twice, not a number); undefined when all were usable. */
  readonly problem: string | undefined;
}

/**
 * Maps query parameters onto the top-level fields of a request message, by
 * the field's proto name (`requested_url`) or JSON name (`requestedUrl`).
 * Decisions, documented in docs/api.md:
 * - parameters that name no field are ignored (cache busters, tracking tags);
 * - a single-value field given twice, under either name, is a problem, not a
 *   silent pick of one of the values;
 * - a repeated field takes each occurrence as one element;
 * - message and map fields cannot be set from a query.
 * Parameters listed in `skip` (the api_key credential) are not fields at all.
 */
export function messageFromQuery(schema: DescMessage, query: URLSearchParams, skip: readonly string[]): QueryMapping {
  const target = reflect(schema);
  const valuesByField = new Map<DescField, string[]>();
  for (const [name, value] of query) {
    if (skip.includes(name)) continue;
    const field = schema.fields.find((candidate) => candidate.name === name || candidate.jsonName === name);
    if (field === undefined) continue;
    valuesByField.set(field, [...(valuesByField.get(field) ?? []), value]);
  }
  let problem: string | undefined;
  for (const [field, values] of valuesByField) {
    const fieldProblem = assign(target, field, values);
    problem ??= fieldProblem;
  }
  return { message: target.message, problem };
}

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
    return { ok: true, message: fromJson(schema, withRestEnums(schema, json)) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, status: 400, code: "invalid_argument", message: `the body does not fit ${schema.name}: ${reason}` };
  }
}

/**
 * A body's top-level enum fields as the query takes them: the string the
 * REST door renders (`"userAgent": "googlebot"`) is read as its value, and a
 * string that names no value as a number none has (UNKNOWN_ENUM_NUMBER), which
 * the service refuses as it refuses one from an RPC door. Proto names and
 * numbers pass as protobuf JSON reads them.
 */
function withRestEnums(schema: DescMessage, json: JsonValue): JsonValue {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return json;
  let out: { [key: string]: JsonValue } | null = null;
  for (const field of schema.fields) {
    if (field.fieldKind !== "enum") continue;
    for (const key of [field.jsonName, field.name]) {
      if (!Object.hasOwn(json, key)) continue;
      const text = json[key];
      if (typeof text !== "string" || field.enum.values.some((value) => value.name === text)) continue;
      const parsed = enumFromTextOrUnknown(field.enum, text);
      out ??= Object.assign({}, json);
      out[key] = typeof parsed === "number" ? parsed : UNKNOWN_ENUM_NUMBER;
    }
  }
  return out ?? json;
}

function tooLarge(maxBytes: number): BodyMapping {
  return { ok: false, status: 413, code: "resource_exhausted", message: `the body is larger than ${maxBytes} bytes` };
}

function assign(target: ReturnType<typeof reflect>, field: DescField, values: string[]): string | undefined {
  switch (field.fieldKind) {
    case "scalar":
    case "enum": {
      if (values.length > 1) return `query parameter ${field.jsonName} was given ${values.length} times; give it once`;
      // An enum's text that names no value goes on as a number no value has: the service refuses it as it refuses an unknown number from an RPC door (user_agent: input_user_agent, before any charge).
      const parsed =
        field.fieldKind === "scalar" ? scalarFromText(field.scalar, values[0] ?? "") : enumFromTextOrUnknown(field.enum, values[0] ?? "");
      if (typeof parsed === "object" && parsed !== null && "problem" in parsed)
        return `query parameter ${field.jsonName}: ${parsed.problem}`;
      target.set(field, parsed);
      return undefined;
    }
    case "list": {
      if (field.listKind === "message") return `query parameter ${field.jsonName} names a list of messages, which a query cannot carry`;
      const list = target.get(field);
      for (const value of values) {
        const parsed = field.listKind === "scalar" ? scalarFromText(field.scalar, value) : enumFromText(field.enum, value);
        if (typeof parsed === "object" && parsed !== null && "problem" in parsed)
          return `query parameter ${field.jsonName}: ${parsed.problem}`;
        list.add(parsed);
      }
      return undefined;
    }
    case "message":
    case "map":
      return `query parameter ${field.jsonName} names a ${field.fieldKind} field, which a query cannot carry`;
  }
}

type Parsed = string | number | bigint | boolean | Uint8Array | { readonly problem: string };

const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };
const UINT32 = { min: 0, max: 4_294_967_295 };

function scalarFromText(type: ScalarType, text: string): Parsed {
  switch (type) {
    case ScalarType.STRING:
      return text;
    case ScalarType.BOOL:
      if (text === "true") return true;
      if (text === "false") return false;
      return { problem: `expected true or false, got "${text}"` };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return integer(text, INT32);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return integer(text, UINT32);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return int64(text, false);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return int64(text, true);
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE: {
      const value = Number(text);
      return text.trim() === "" || Number.isNaN(value) ? { problem: `expected a number, got "${text}"` } : value;
    }
    case ScalarType.BYTES:
      try {
        return base64Decode(text);
      } catch {
        return { problem: "expected base64" };
      }
  }
}

function integer(text: string, range: { min: number; max: number }): Parsed {
  if (!/^-?\d+$/.test(text)) return { problem: `expected a whole number, got "${text}"` };
  const value = Number(text);
  if (value < range.min || value > range.max) return { problem: `expected a number from ${range.min} to ${range.max}, got ${text}` };
  return value;
}

function int64(text: string, unsigned: boolean): Parsed {
  if (!(unsigned ? /^\d+$/ : /^-?\d+$/).test(text)) return { problem: `expected a whole number, got "${text}"` };
  try {
    return unsigned ? protoInt64.uParse(text) : protoInt64.parse(text);
  } catch {
    return { problem: `${text} is out of range` };
  }
}

/** A number no enum value of this service has (proto3 enums are open, so a message may hold it). */
export const UNKNOWN_ENUM_NUMBER = -1;

function enumFromTextOrUnknown(desc: DescEnum, text: string): Parsed {
  const parsed = enumFromText(desc, text);
  return typeof parsed === "object" && "problem" in parsed ? UNKNOWN_ENUM_NUMBER : parsed;
}

/** An enum accepts the string the REST door renders for it, its proto name, or its number. */
function enumFromText(desc: DescEnum, text: string): Parsed {
  const value =
    desc.values.find((candidate) => text !== "" && restValueOf(candidate) === text) ??
    desc.values.find((candidate) => candidate.name === text) ??
    desc.values.find((candidate) => /^-?\d+$/.test(text) && candidate.number === Number(text));
  if (value === undefined) return { problem: `"${text}" is not one of ${desc.values.map((each) => each.name).join(", ")}` };
  return value.number;
}
