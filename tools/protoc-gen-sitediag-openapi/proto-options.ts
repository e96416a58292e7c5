import {
  getOption,
  hasOption,
  isMessage,
  type DescEnumValue,
  type DescExtension,
  type DescField,
  type DescMethod,
  type FileRegistry,
} from "@bufbuild/protobuf";
import type { HttpRule } from "../../gen/google/api/http_pb.js";

/**
 * The custom options the document is driven by, read off the descriptors of
 * the CodeGeneratorRequest itself. The extensions are looked up in the
 * request's own registry rather than imported from gen/: buf's `clean: true`
 * empties gen/ before plugins run, so this plugin must not load code from it.
 */
export interface ProtoOptions {
  /** The google.api.http rule of a method, or undefined when it has none. */
  httpRule(method: DescMethod): HttpRule | undefined;
  /** The (sitediag.v1.rest_value) string of an enum value, or undefined. */
  restValue(value: DescEnumValue): string | undefined;
  /** Whether (sitediag.v1.rest_null_when_empty) = true is set on a field. */
  nullWhenEmpty(field: DescField): boolean;
  /** Whether (sitediag.v1.rest_omit_when_absent) = true is set on a field. */
  omitWhenAbsent(field: DescField): boolean;
}

const HTTP = "google.api.http";
const REST_VALUE = "sitediag.v1.rest_value";
const REST_NULL_WHEN_EMPTY = "sitediag.v1.rest_null_when_empty";
const REST_OMIT_WHEN_ABSENT = "sitediag.v1.rest_omit_when_absent";

export function createProtoOptions(registry: FileRegistry): ProtoOptions {
  // An extension missing from the request means no file uses it: then no
  // element can carry the option, and every lookup answers "not set".
  const http = registry.getExtension(HTTP);
  const restValue = registry.getExtension(REST_VALUE);
  const nullWhenEmpty = registry.getExtension(REST_NULL_WHEN_EMPTY);
  const omitWhenAbsent = registry.getExtension(REST_OMIT_WHEN_ABSENT);
  return {
    httpRule(method) {
      if (http === undefined || !hasOption(method, http)) return undefined;
      const rule = getOption(method, http);
      return isHttpRule(rule) ? rule : undefined;
    },
    restValue(value) {
      const option = readOption(value, restValue);
      return typeof option === "string" ? option : undefined;
    },
    nullWhenEmpty(field) {
      return readOption(field, nullWhenEmpty) === true;
    },
    omitWhenAbsent(field) {
      return readOption(field, omitWhenAbsent) === true;
    },
  };
}

function readOption(element: DescEnumValue | DescField, extension: DescExtension | undefined): unknown {
  if (extension === undefined || !hasOption(element, extension)) return undefined;
  return getOption(element, extension);
}

function isHttpRule(value: unknown): value is HttpRule {
  return isMessage(value) && value.$typeName === "google.api.HttpRule";
}
