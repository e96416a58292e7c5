import { isPrimaryMessage, type ListeningMessage } from "./cluster-messages.js";

/** Tells the primary this worker is accepting calls. */
export function announceListening(message: Omit<ListeningMessage, "type">): void {
  process.send?.({ type: "sitediag:listening", ...message } satisfies ListeningMessage);
}

/**
 * A worker's stop requests: the primary's stop message, the primary going
 * away (its channel closes), or a SIGTERM sent to this worker alone. Each
 * means "stop gracefully"; the listener hears only the first, because
 * stopping at once is the primary's decision (it kills the worker). SIGINT
 * is ignored: Ctrl-C reaches every process of the terminal's group, and the
 * primary turns it into stop messages.
 */
export function onWorkerStopRequest(listener: (reason: string) => void): () => void {
  let heard = false;
  const hear = (reason: string) => {
    if (heard) return;
    heard = true;
    listener(reason);
  };
  const onMessage = (message: unknown) => {
    if (isPrimaryMessage(message) && message.type === "sitediag:stop") hear("stop request from the primary");
  };
  const onDisconnect = () => hear("primary gone");
  const onTerm = () => hear("SIGTERM");
  const ignore = () => undefined;
  process.on("message", onMessage);
  process.on("disconnect", onDisconnect);
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", ignore);
  return () => {
    process.off("message", onMessage);
    process.off("disconnect", onDisconnect);
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", ignore);
  };
}
