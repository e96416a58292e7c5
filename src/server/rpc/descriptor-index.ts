import { type DescExtension, type DescFile, type DescService, toBinary } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/** The protobuf files a server exposes through reflection, with their imports, indexed by what they declare. */
export interface DescriptorIndex {
  /** Fully-qualified names of the services, sorted. */
  readonly serviceNames: readonly string[];
  /** The file with this path ("sitediag/v1/diagnostics.proto"). */
  fileByName(name: string): DescFile | undefined;
  /** The file declaring a message, enum, service, method, field, enum value or extension. */
  fileBySymbol(symbol: string): DescFile | undefined;
  /** The file declaring the extension `number` of message `extendee`. */
  fileByExtension(extendee: string, number: number): DescFile | undefined;
  /** Every extension number known for a message; undefined when the message is unknown. */
  extensionNumbersOf(extendee: string): number[] | undefined;
  /** The file followed by every file it imports, transitively, each once. */
  withImports(file: DescFile): DescFile[];
  /** A file's FileDescriptorProto in the protobuf binary format, as reflection sends it. */
  serialized(file: DescFile): Uint8Array;
}

/** Indexes the files of the given services and everything they import (descriptor.proto included). */
export function createDescriptorIndex(services: readonly DescService[]): DescriptorIndex {
  const files = new Map<string, DescFile>();
  for (const service of services) collectFile(service.file, files);

  const symbols = new Map<string, DescFile>();
  const extensions = new Map<string, DescExtension[]>();
  for (const file of files.values()) {
    for (const type of nestedTypes(file)) {
      symbols.set(type.typeName, file);
      switch (type.kind) {
        case "message":
          for (const field of type.fields) symbols.set(`${type.typeName}.${field.name}`, file);
          break;
        case "enum":
          // Enum values are scoped like siblings of their enum (protobuf's C++ scoping rule).
          for (const value of type.values) symbols.set(`${parentScope(type.typeName)}${value.name}`, file);
          break;
        case "service":
          for (const method of type.methods) symbols.set(`${type.typeName}.${method.name}`, file);
          break;
        case "extension":
          extensions.set(type.extendee.typeName, [...(extensions.get(type.extendee.typeName) ?? []), type]);
          break;
      }
    }
  }

  const bytes = new Map<DescFile, Uint8Array>();
  return {
    serviceNames: services.map((service) => service.typeName).sort(),
    fileByName: (name) => files.get(name),
    fileBySymbol: (symbol) => symbols.get(symbol),
    fileByExtension: (extendee, number) => extensions.get(extendee)?.find((extension) => extension.number === number)?.file,
    extensionNumbersOf: (extendee) => {
      if (!symbols.has(extendee)) return undefined;
      return (extensions.get(extendee) ?? []).map((extension) => extension.number).sort((a, b) => a - b);
    },
    withImports: (file) => [...collectFile(file, new Map()).values()],
    serialized: (file) => {
      let encoded = bytes.get(file);
      if (encoded === undefined) {
        encoded = toBinary(FileDescriptorProtoSchema, file.proto);
        bytes.set(file, encoded);
      }
      return encoded;
    },
  };
}

function collectFile(file: DescFile, into: Map<string, DescFile>): Map<string, DescFile> {
  if (into.has(file.proto.name)) return into;
  into.set(file.proto.name, file);
  for (const dependency of file.dependencies) collectFile(dependency, into);
  return into;
}

function parentScope(typeName: string): string {
  const dot = typeName.lastIndexOf(".");
  return dot === -1 ? "" : typeName.slice(0, dot + 1);
}
