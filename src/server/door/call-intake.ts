import { type ConnectError, type ContextValues, createContextValues } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { Overload } from "../../probe/overload.js";
import { sharedClockMs } from "../../probe/clock.js";
import { type Call, callKey, type CallReport, type Door } from "../../service/call.js";
import type { NodeRequest, NodeResponse } from "./json-answer.js";
import type { RequestTarget } from "./request-target.js";
import type { DiagnosticRoute } from "./route-table.js";

export type { Call, Door } from "../../service/call.js";

/** A request as the port received it, before any route: what the request observer knows of it, or a bare one without observer. */
export interface Arrival {
  /** The request id, "" when no observer gave one. */
  readonly id: string;
  /** Its target, read once on arrival. */
  readonly target: RequestTarget;
  /** On the shared clock: a call's timeouts start here, unless it waited for a turn. */
  readonly arrivedAt: number;
  /** Where the call's outcome is told, for the observer's log line and request metric. */
  readonly report: CallReport;
}

/** A request for `target` arriving now; `overloaded` is told of each overload answer of its call (nobody, by default). */
export function arrivalNow(target: RequestTarget, id = "", overloaded: (overload: Overload) => void = ignore): Arrival {
  return { id, target, arrivedAt: sharedClockMs(), report: { outcome: undefined, target: null, overloaded } };
}

function ignore(): void {}

/** The port's request handler below the request observer: each request comes with its arrival. */
export type DoorHandler = (request: NodeRequest, response: NodeResponse, arrival: Arrival) => void;

/** Let in (hold the slot until `release`; `turnAt` when it waited for its turn on the probe threads), or the refusal to answer with. */
export type Admitted =
  | { readonly ok: true; readonly turnAt: number | undefined; release(): void }
  | { readonly ok: false; readonly error: ConnectError };

/** What a diagnostic call must pass from its headers alone, before its body is read (admission/admission.ts). */
export interface Admission {
  admit(route: DiagnosticRoute, presentedKey: string | null): Promise<Admitted>;
}

/** A call let in, its slots bound to its answer; or the refusal, already told to the call's report. */
export type Intake = { readonly ok: true; readonly call: Call; release(): void } | { readonly ok: false; readonly error: ConnectError };

/**
 * Takes a diagnostic call in on any door: admission from its headers, then
 * the Call, built here and nowhere else, so its timeouts start in one place:
 * at its arrival, or when its turn came if it waited for one (that wait was
 * the service's, not the site's). A refused call never reaches the observing
 * interceptor, so its outcome is told here, for the log line and the metric.
 */
export async function takeIn(
  admission: Admission | undefined,
  arrival: Arrival,
  response: NodeResponse,
  door: Door,
  route: DiagnosticRoute,
  presentedKey: string | null,
  inputProblem?: string,
): Promise<Intake> {
  if (admission === undefined)
    return { ok: true, call: createCall(arrival, door, route, arrival.arrivedAt, inputProblem), release: () => undefined };
  const admitted = await admission.admit(route, presentedKey);
  if (!admitted.ok) {
    arrival.report.outcome = codeToString(admitted.error.code);
    return admitted;
  }
  releaseWithAnswer(response, admitted.release);
  return {
    ok: true,
    call: createCall(arrival, door, route, admitted.turnAt ?? arrival.arrivedAt, inputProblem),
    release: admitted.release,
  };
}

function createCall(arrival: Arrival, door: Door, route: DiagnosticRoute, timeoutsFrom: number, inputProblem: string | undefined): Call {
  return { id: arrival.id, door, route, timeoutsFrom, inputProblem, report: arrival.report };
}

/** The context values a diagnostic call starts with on any door: its Call, the one value the layers below read. */
export function callContextValues(call: Call): ContextValues {
  return createContextValues().set(callKey, call);
}

/** The RPC door a request uses, from its content type (the same test Connect's handlers make). */
export function rpcDoorOf(contentType: string | string[] | undefined): Door {
  const type = ((Array.isArray(contentType) ? contentType[0] : contentType) ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * Gives a call's slots back when its answer is over: all of it written
 * ('finish'), or closed before that (a client gone). Not later: an answer
 * written before its body was read leaves the connection open a while
 * after (the lingering close on HTTP/1.1, the reset that follows on
 * HTTP/2), and that while must hold no slot, or a few calls refused for
 * their bodies would shut everyone out until the request timeout. Every
 * door binds its slots this way, once admitted; a client that left while
 * its key was looked up has already closed, and gives its slots back here
 * and now. `release` may run twice (finish, then close); only the first
 * counts.
 *
 * On HTTP/2 the events are the stream's, not the response's: Node's
 * compatibility response emits 'finish' and 'close' together, and only when
 * its stream is destroyed, which for an answer written before its body was
 * read is after the reset that follows it, or never if that stream is left
 * undestroyed (early-answer.ts). The stream's own 'finish' is the answer
 * all written.
 */
export function releaseWithAnswer(response: NodeResponse, release: () => void): void {
  const events = "stream" in response ? response.stream : response;
  if (response.writableFinished || events.destroyed) return release();
  events.once("finish", release);
  events.once("close", release);
}
