import { createContextKey } from "@connectrpc/connect";

/** Which of the service's doors a call came through; for logs and metrics, never for behaviour. */
export type Door = "rest" | "connect" | "grpc" | "grpc-web";

/**
 * Set on every call's context values by the server, so interceptors can tell
 * the REST door from the RPC doors even though both run the same handlers.
 */
export const doorKey = createContextKey<Door>("connect", { description: "door the call came through" });

/** The RPC door a request uses, from its content type (the same test Connect's handlers make). */
export function rpcDoorOf(contentType: string | undefined): Door {
  const type = (contentType ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}
