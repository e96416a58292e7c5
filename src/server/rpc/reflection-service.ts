import type { ConnectRouter } from "@connectrpc/connect";
import { ServerReflection as ReflectionV1 } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import type { DescriptorIndex } from "./descriptor-index.js";

/** The request oneof, identical in grpc.reflection.v1 and v1alpha. */
type ReflectionQuery =
  | { readonly case: "fileByFilename"; readonly value: string }
  | { readonly case: "fileContainingSymbol"; readonly value: string }
  | { readonly case: "fileContainingExtension"; readonly value: { readonly containingType: string; readonly extensionNumber: number } }
  | { readonly case: "allExtensionNumbersOfType"; readonly value: string }
  | { readonly case: "listServices"; readonly value: string }
  | { readonly case: undefined; readonly value?: undefined };

/** The response oneof, identical in both versions, as init data either version's schema accepts. */
type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/** The reflection services registerReflection adds, so they can describe themselves. */
export const reflectionServices = [ReflectionV1, ReflectionV1Alpha] as const;

// grpc status codes carried inside ErrorResponse (the stream itself stays OK).
const GRPC_NOT_FOUND = 5;
const GRPC_INVALID_ARGUMENT = 3;

/**
 * Registers gRPC server reflection, both grpc.reflection.v1 and the v1alpha
 * that older tools still ask for, answering from the descriptors compiled
 * into gen/. Every file answer carries the file's imports too, so a client
 * can resolve custom options (google.api.http, sitediag.v1.rest_value) and
 * descriptor.proto without a second round trip.
 */
export function registerReflection(router: ConnectRouter, index: DescriptorIndex): void {
  router.service(ReflectionV1, {
    serverReflectionInfo: async function* (requests) {
      for await (const request of requests) {
        yield { validHost: request.host, originalRequest: request, messageResponse: answer(index, request.messageRequest) };
      }
    },
  });
  router.service(ReflectionV1Alpha, {
    serverReflectionInfo: async function* (requests) {
      for await (const request of requests) {
        yield { validHost: request.host, originalRequest: request, messageResponse: answer(index, request.messageRequest) };
      }
    },
  });
}

function answer(index: DescriptorIndex, query: ReflectionQuery): ReflectionAnswer {
  switch (query.case) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: index.serviceNames.map((name) => ({ name })) } };
    case "fileByFilename":
      return filesOrNotFound(index, index.fileByName(query.value), `file ${query.value}`);
    case "fileContainingSymbol":
      return filesOrNotFound(index, index.fileBySymbol(query.value), `symbol ${query.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = query.value;
      return filesOrNotFound(
        index,
        index.fileByExtension(containingType, extensionNumber),
        `extension ${extensionNumber} of ${containingType}`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbersOf(query.value);
      if (numbers === undefined) return notFound(`type ${query.value}`);
      return { case: "allExtensionNumbersResponse", value: { baseTypeName: query.value, extensionNumber: numbers } };
    }
    case undefined:
      return { case: "errorResponse", value: { errorCode: GRPC_INVALID_ARGUMENT, errorMessage: "empty reflection request" } };
  }
}

function filesOrNotFound(
  index: DescriptorIndex,
  file: Parameters<DescriptorIndex["withImports"]>[0] | undefined,
  what: string,
): ReflectionAnswer {
  if (file === undefined) return notFound(what);
  return { case: "fileDescriptorResponse", value: { fileDescriptorProto: index.withImports(file).map((each) => index.serialized(each)) } };
}

function notFound(what: string): ReflectionAnswer {
  return { case: "errorResponse", value: { errorCode: GRPC_NOT_FOUND, errorMessage: `${what} not found` } };
}
