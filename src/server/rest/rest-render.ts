import {
  type DescEnum,
  type DescEnumValue,
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  type JsonObject,
  type JsonValue,
  type Message,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";
import { isReflectMessage, reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { rest_null_when_empty, rest_omit_when_absent, rest_value } from "../../../gen/sitediag/v1/options_pb.js";

/** A response message the REST door cannot show as the contract says; a defect on the server side. */
export class RestRenderError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = "RestRenderError";
  }
}

/**
 * Renders a response message as the REST door's `data`, driven by the schema
 * rather than by protobuf JSON, which omits unset and empty fields:
 * - every field appears, under its JSON name, in declaration order;
 * - a field with explicit presence (`optional`, a message, a oneof member)
 *   that is unset is `null`;
 * - an unset message field that carries (sitediag.v1.rest_omit_when_absent)
 *   is left out: additions beyond the contract (`details`) appear only when asked for;
 * - a repeated field is an array, `[]` when empty, or `null` when empty if the
 *   field carries (sitediag.v1.rest_null_when_empty);
 * - an enum shows its value's (sitediag.v1.rest_value) string; a value without
 *   one (UNSPECIFIED) is a defect, reported as RestRenderError;
 * - 32-bit integers and floating point are JSON numbers, 64-bit integers are
 *   strings (as protobuf JSON has them), bytes are base64.
 * Well-known types (google.protobuf.*) keep their protobuf JSON form.
 */
export function renderMessage(schema: DescMessage, message: Message): JsonObject {
  return renderReflected(reflect(schema, message));
}

function renderReflected(source: ReflectMessage): JsonObject {
  const out: JsonObject = {};
  for (const field of source.desc.fields) {
    if (field.fieldKind === "message" && !source.isSet(field) && omitWhenAbsent(field)) continue;
    out[field.jsonName] = renderField(source, field);
  }
  return out;
}

function renderField(source: ReflectMessage, field: DescField): JsonValue {
  const where = `${source.desc.typeName}.${field.name}`;
  switch (field.fieldKind) {
    case "scalar":
      if (hasExplicitPresence(field) && !source.isSet(field)) return null;
      return renderScalar(field.scalar, source.get(field));
    case "enum":
      if (hasExplicitPresence(field) && !source.isSet(field)) return null;
      return renderEnum(field.enum, source.get(field), where);
    case "message":
      if (!source.isSet(field)) return null;
      return renderNested(source.get(field), where);
    case "list": {
      const items: JsonValue[] = [];
      for (const item of source.get(field)) items.push(renderItem(field, item, where));
      if (items.length === 0 && nullWhenEmpty(field)) return null;
      return items;
    }
    case "map": {
      const entries: JsonObject = {};
      for (const [key, value] of source.get(field)) entries[String(key)] = renderItem(field, value, where);
      return entries;
    }
  }
}

function renderItem(field: DescField & { fieldKind: "list" | "map" }, item: unknown, where: string): JsonValue {
  const kind = field.fieldKind === "list" ? field.listKind : field.mapKind;
  switch (kind) {
    case "message":
      if (!isReflectMessage(item)) throw new RestRenderError(where, "expected a message item");
      return renderNested(item, where);
    case "enum":
      return renderEnum(field.enum as DescEnum, item, where);
    case "scalar":
      return renderScalar(field.scalar as ScalarType, item);
  }
}

function renderNested(message: ReflectMessage, where: string): JsonValue {
  if (message.desc.file.proto.package === "google.protobuf") {
    try {
      return toJson(message.desc, message.message);
    } catch (cause) {
      throw new RestRenderError(where, cause instanceof Error ? cause.message : String(cause));
    }
  }
  return renderReflected(message);
}

function renderEnum(desc: DescEnum, number: unknown, where: string): JsonValue {
  const value = desc.values.find((candidate) => candidate.number === number);
  const rendered = value === undefined ? undefined : restValueOf(value);
  if (value === undefined || rendered === undefined) {
    throw new RestRenderError(where, `enum value ${value?.name ?? String(number)} has no REST rendering (sitediag.v1.rest_value)`);
  }
  return rendered;
}

// Options are read off the descriptors once: getOption decodes them anew on every call.
const restValues = new WeakMap<DescEnumValue, string | undefined>();
const nullsWhenEmpty = new WeakMap<DescField, boolean>();
const omissions = new WeakMap<DescField, boolean>();

/** The enum value's REST string (sitediag.v1.rest_value), or undefined when it has none. */
export function restValueOf(value: DescEnumValue): string | undefined {
  if (!restValues.has(value)) restValues.set(value, hasOption(value, rest_value) ? getOption(value, rest_value) : undefined);
  return restValues.get(value);
}

function nullWhenEmpty(field: DescField): boolean {
  let flag = nullsWhenEmpty.get(field);
  if (flag === undefined) {
    flag = getOption(field, rest_null_when_empty);
    nullsWhenEmpty.set(field, flag);
  }
  return flag;
}

function omitWhenAbsent(field: DescField): boolean {
  let flag = omissions.get(field);
  if (flag === undefined) {
    flag = getOption(field, rest_omit_when_absent);
    omissions.set(field, flag);
  }
  return flag;
}

function renderScalar(type: ScalarType, value: unknown): JsonValue {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return String(value);
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE: {
      const number = Number(value);
      return Number.isFinite(number) ? number : String(number);
    }
    case ScalarType.BYTES:
      return value instanceof Uint8Array ? base64Encode(value) : "";
    case ScalarType.BOOL:
      return value === true;
    case ScalarType.STRING:
      return typeof value === "string" ? value : String(value);
    case ScalarType.INT32:
    case ScalarType.UINT32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return Number(value);
  }
}

function hasExplicitPresence(field: DescField): boolean {
  return field.oneof !== undefined || field.presence === FeatureSet_FieldPresence.EXPLICIT;
}
