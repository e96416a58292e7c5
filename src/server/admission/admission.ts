import type { ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { KeyGate } from "../../access/key-gate.js";
import { sharedClockMs } from "../../probe/clock.js";
import type { NodeResponse } from "../json-response.js";
import { callRecordOf } from "../observers/call-record.js";
import type { Door } from "../rpc/door.js";
import type { InflightLimit } from "./inflight-limit.js";
import type { ProbeQueue } from "./probe-queue.js";

/** Let in (hold the slot until `release`), or the refusal to answer with. */
export type Admitted = { readonly ok: true; release(): void } | { readonly ok: false; readonly error: ConnectError };

/**
 * What a diagnostic request must pass from its headers alone, on every door,
 * before anything of its body is read: a slot under the in-flight cap
 * first (so an overloaded port refuses even anonymous callers without a
 * store lookup), then the key, then its turn on the probe threads (it waits
 * while their loops are too delayed to time a hop honestly). A refused request costs a counter and, for
 * a well-formed unknown key, one store lookup; never a body.
 */
export interface Admission {
  /** `weight`: in-flight slots the call holds (a batch: as many as it runs items at once). */
  admit(request: object, door: Door, operation: string, presentedKey: string | null, weight?: number): Promise<Admitted>;
}

export function createAdmission(inflight: InflightLimit, keyGate: KeyGate, probeQueue?: ProbeQueue): Admission {
  return {
    async admit(request, door, operation, presentedKey, weight = 1) {
      const slot = inflight.take(operation, weight);
      if (!slot.ok) return refused(request, door, operation, slot.error);
      let refusal: ConnectError | null;
      try {
        refusal = await keyGate(presentedKey);
        // Only a caller with a good key waits for a turn: a wrong key takes no place in the queue.
        if (refusal === null) refusal = (await probeQueue?.pass(operation, () => restartTimeouts(request))) ?? null;
      } catch (error) {
        slot.release();
        throw error;
      }
      if (refusal === null) return slot;
      slot.release();
      return refused(request, door, operation, refusal);
    },
  };
}

/**
 * Gives a call's slots back when its answer is over: all of it written
 * ('finish'), or the response closed before that (a client gone). Not
 * later: an answer written before its body was read leaves the connection
 * open a while after (the lingering close on HTTP/1.1, the reset that
 * follows on HTTP/2), and that while must hold no slot, or a few calls
 * refused for their bodies would shut everyone out until the request
 * timeout. Every door binds its slots this way, once admitted; a client
 * that left while its key was looked up has already closed, and gives its
 * slots back here and now.
 */
export function releaseWithAnswer(response: NodeResponse, release: () => void): void {
  const over = response.writableFinished || ("stream" in response ? response.stream.destroyed : response.destroyed);
  if (over) return release();
  response.once("finish", release);
  response.once("close", release);
}

/** A check that waited for its turn starts its timeouts when the turn came: the wait was the service's, not the site's. */
function restartTimeouts(request: object): void {
  const record = callRecordOf(request);
  if (record !== undefined) record.timeoutsFrom = sharedClockMs();
}

/** The call observer never sees a call refused here, so its record is written here, for the log line and the request metric. */
function refused(request: object, door: Door, operation: string, error: ConnectError): Admitted {
  const record = callRecordOf(request);
  if (record !== undefined) {
    record.door = door;
    record.operation = operation;
    record.outcome = codeToString(error.code);
  }
  return { ok: false, error };
}
