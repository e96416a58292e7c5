import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { type BatchItemError, BatchItemErrorSchema } from "../../gen/sitediag/v1/diagnostics_pb.js";

export { batchSizeProblem } from "../batch.js";

/** An item's error as the stream carries it: the Connect code name and the message, as the error envelope has them. */
export function itemError(error: ConnectError): BatchItemError {
  return create(BatchItemErrorSchema, { code: codeToString(error.code), message: error.rawMessage });
}

/** What a single-URL handler threw, as the item error it becomes; the item's own failure never fails the stream. */
export function asItemError(reason: unknown): BatchItemError {
  return itemError(reason instanceof ConnectError ? reason : new ConnectError("The item could not be completed", Code.Internal));
}
