import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { commentText } from "./comments.js";
import { componentRef, type JsonObject, type JsonSchema, type JsonValue } from "./json-value.js";
import type { Problem } from "./problem.js";
import type { ProtoOptions } from "./proto-options.js";

/**
 * JSON Schemas of response messages as the REST door renders them: every field
 * present under its JSON name, explicit null for an unset `optional` field
 * (a field marked (sitediag.v1.rest_omit_when_absent) is absent instead, so
 * it is neither required nor nullable),
 * enums as their (sitediag.v1.rest_value) strings, nested messages as
 * components. One component per message, keyed by its full proto name so two
 * packages can never collide.
 */
export interface MessageSchemas {
  /** Adds the message (and every message it reaches) and returns a $ref to it. */
  refTo(message: DescMessage): JsonObject;
  /** The schema of a query parameter's value: singular scalar and enum fields only. */
  parameterSchema(field: DescField): JsonSchema;
  /**
   * A request message as a JSON body (protobuf JSON, as the REST door reads
   * it): every field may be left out, `optional` ones may be null, unknown
   * fields are refused. Inline, since request messages are not responses.
   */
  requestSchema(message: DescMessage): JsonSchema;
  /** The collected components, in the order they were first reached. */
  components(): JsonObject;
  problems(): readonly Problem[];
}

export function createMessageSchemas(options: ProtoOptions): MessageSchemas {
  const schemas: JsonObject = {};
  const problems: Problem[] = [];

  function refTo(message: DescMessage): JsonObject {
    if (!(message.typeName in schemas)) {
      // Reserve the name first so a recursive message refers to itself.
      schemas[message.typeName] = {};
      schemas[message.typeName] = messageSchema(message);
    }
    return componentRef("schemas", message.typeName);
  }

  function messageSchema(message: DescMessage): JsonSchema {
    const properties: JsonObject = {};
    for (const field of message.fields) {
      properties[field.jsonName] = fieldSchema(field);
    }
    return {
      type: "object",
      description: commentText(message),
      required: message.fields.filter((field) => !options.omitWhenAbsent(field)).map((field) => field.jsonName),
      properties,
      additionalProperties: false,
    };
  }

  function fieldSchema(field: DescField): JsonSchema {
    const description = commentText(field);
    if (field.oneof !== undefined && field.proto.proto3Optional !== true) {
      return unsupported(field, "oneof members have no REST rendering yet");
    }
    switch (field.fieldKind) {
      case "map":
        return unsupported(field, "map fields have no REST rendering yet");
      case "list":
        return listSchema(field, description);
      case "enum":
        return { description: withValueList(description, field.enum), ...withPresence(field, enumSchema(field, field.enum)) };
      case "scalar":
        return { description, ...withPresence(field, scalarSchema(field, field.scalar)) };
      case "message":
        if (options.omitWhenAbsent(field)) return { description, ...messageSchemaRef(field, field.message) };
        return { description, ...withPresence(field, messageSchemaRef(field, field.message)) };
    }
  }

  function listSchema(field: DescField & { fieldKind: "list" }, description: string): JsonSchema {
    const type = options.nullWhenEmpty(field) ? ["array", "null"] : "array";
    switch (field.listKind) {
      case "scalar":
        return { description, type, items: scalarSchema(field, field.scalar) };
      case "enum":
        return { description: withValueList(description, field.enum), type, items: enumSchema(field, field.enum) };
      case "message":
        return { description, type, items: messageSchemaRef(field, field.message) };
    }
  }

  // A field that tracks presence is rendered as null when unset: proto3
  // `optional` fields, and singular message fields, which always track it.
  function withPresence(field: DescField, schema: JsonSchema): JsonSchema {
    return field.proto.proto3Optional === true || field.fieldKind === "message" ? nullable(schema) : schema;
  }

  function messageSchemaRef(field: DescField, message: DescMessage): JsonSchema {
    // Well-known types have their own JSON mapping, not their fields.
    if (message.typeName.startsWith("google.protobuf.")) {
      return unsupported(field, `${message.typeName} has a special JSON mapping the REST door does not render`);
    }
    return refTo(message);
  }

  // The field comment followed by the meaning of each public value, from the
  // enum value comments.
  function withValueList(description: string, enumDesc: DescEnum): string {
    const list = enumDesc.values
      .flatMap((value) => {
        const rest = options.restValue(value);
        return rest === undefined ? [] : [`- \`${rest}\`: ${commentText(value)}`];
      })
      .join("\n");
    return [description, list].filter((part) => part !== "").join("\n\n");
  }

  function enumSchema(field: DescField, enumDesc: DescEnum): JsonSchema {
    const values: JsonValue[] = [];
    for (const value of enumDesc.values) {
      const rest = options.restValue(value);
      if (rest !== undefined) {
        values.push(rest);
      } else if (value.number !== 0) {
        // The zero value is proto3's "never sent"; any other value the REST
        // door could meet needs its public string.
        problems.push({
          element: `${enumDesc.typeName}.${value.name}`,
          rule: "enum-value-without-rest-value",
          reason: `used by ${field.parent.typeName}.${field.name} but has no (sitediag.v1.rest_value)`,
        });
      }
    }
    return { type: "string", enum: values };
  }

  function scalarSchema(field: DescField, scalar: ScalarType): JsonSchema {
    switch (scalar) {
      case ScalarType.STRING:
        return { type: "string" };
      case ScalarType.BOOL:
        return { type: "boolean" };
      case ScalarType.INT32:
      case ScalarType.SINT32:
      case ScalarType.SFIXED32:
        return { type: "integer", format: "int32" };
      case ScalarType.UINT32:
      case ScalarType.FIXED32:
        return { type: "integer", minimum: 0, maximum: 4_294_967_295 };
      case ScalarType.DOUBLE:
        return { type: "number", format: "double" };
      case ScalarType.FLOAT:
        return { type: "number", format: "float" };
      case ScalarType.INT64:
      case ScalarType.UINT64:
      case ScalarType.SINT64:
      case ScalarType.FIXED64:
      case ScalarType.SFIXED64:
      case ScalarType.BYTES:
        return unsupported(field, `scalar ${ScalarType[scalar]} has no REST rendering yet (64-bit and bytes JSON forms are strings)`);
    }
  }

  function parameterSchema(field: DescField): JsonSchema {
    if (field.fieldKind === "scalar") return scalarSchema(field, field.scalar);
    if (field.fieldKind === "enum") return enumSchema(field, field.enum);
    // A repeated scalar takes each occurrence of the parameter as one element (OpenAPI's default form, exploded).
    if (field.fieldKind === "list" && field.listKind === "scalar") return { type: "array", items: scalarSchema(field, field.scalar) };
    return unsupported(field, "a query parameter takes a scalar or enum value, or a list of scalars");
  }

  function requestSchema(message: DescMessage): JsonSchema {
    const properties: JsonObject = {};
    for (const field of message.fields) properties[field.jsonName] = requestFieldSchema(field);
    return { type: "object", description: commentText(message), properties, additionalProperties: false };
  }

  function requestFieldSchema(field: DescField): JsonSchema {
    const description = commentText(field);
    switch (field.fieldKind) {
      case "scalar":
        return {
          description,
          ...(field.proto.proto3Optional === true ? nullable(scalarSchema(field, field.scalar)) : scalarSchema(field, field.scalar)),
        };
      case "enum":
        return { description, ...enumSchema(field, field.enum) };
      case "list":
        if (field.listKind === "scalar") return { description, type: "array", items: scalarSchema(field, field.scalar) };
        if (field.listKind === "message") return { description, type: "array", items: requestSchema(field.message) };
        return { description, type: "array", items: enumSchema(field, field.enum) };
      case "message":
        return { description, ...nullable(requestSchema(field.message)) };
      case "map":
        return unsupported(field, "map fields have no REST rendering yet");
    }
  }

  function unsupported(field: DescField, reason: string): JsonSchema {
    problems.push({ element: `${field.parent.typeName}.${field.name}`, rule: "unsupported-field-kind", reason });
    return {};
  }

  return {
    refTo,
    parameterSchema,
    requestSchema,
    components: () => schemas,
    problems: () => problems,
  };
}

/**
 * Adds null to a schema: a type list for plain types (and null to an enum
 * list, which would otherwise exclude it), anyOf for a $ref.
 */
function nullable(schema: JsonSchema): JsonSchema {
  const { type, enum: values } = schema;
  if (typeof type === "string") {
    const withNull: JsonSchema = { ...schema, type: [type, "null"] };
    if (Array.isArray(values)) withNull.enum = [...values, null];
    return withNull;
  }
  return { anyOf: [schema, { type: "null" }] };
}
