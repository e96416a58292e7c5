/**
 * What the primary and the workers of a clustered `sitediag serve`
 * (SITEDIAG_WORKERS > 1) say to each other over the IPC channel. prom-client's
 * own aggregation messages share the channel; every type here starts with
 * "sitediag:" so neither side mistakes the other's.
 */

/** A worker is accepting calls on the shared port. */
export interface ListeningMessage {
  readonly type: "sitediag:listening";
  readonly url: string;
  readonly metricsUrl: string | null;
  readonly store: string;
}

/** A worker asks for the whole instance's metrics, to answer a scrape. */
export interface MetricsRequestMessage {
  readonly type: "sitediag:metrics-request";
  readonly id: number;
}

/** Stop accepting, finish the calls in flight, close the store, exit. */
export interface StopMessage {
  readonly type: "sitediag:stop";
}

/** The primary's answer to a MetricsRequestMessage: the exposition, or why there is none. */
export type MetricsResponseMessage =
  | { readonly type: "sitediag:metrics-response"; readonly id: number; readonly text: string }
  | { readonly type: "sitediag:metrics-response"; readonly id: number; readonly error: string };

export type WorkerMessage = ListeningMessage | MetricsRequestMessage;
export type PrimaryMessage = StopMessage | MetricsResponseMessage;

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  if (!isRecord(value)) return false;
  if (value.type === "sitediag:listening") return typeof value.url === "string" && typeof value.store === "string";
  return value.type === "sitediag:metrics-request" && typeof value.id === "number";
}

export function isPrimaryMessage(value: unknown): value is PrimaryMessage {
  if (!isRecord(value)) return false;
  if (value.type === "sitediag:stop") return true;
  return (
    value.type === "sitediag:metrics-response" &&
    typeof value.id === "number" &&
    (typeof value.text === "string" || typeof value.error === "string")
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

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
