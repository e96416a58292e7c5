import { Code, ConnectError } from "@connectrpc/connect";
import type { KeyGate } from "../../access/key-gate.js";
import { sharedClockMs } from "../../probe/clock.js";
import type { Admission } from "../door/call-intake.js";
import type { ProbeQueue } from "./probe-queue.js";

/**
 * What a diagnostic request must pass from its headers alone, on every door,
 * before anything of its body is read: a slot under the in-flight cap
 * first (so an overloaded port refuses even anonymous callers without a
 * store lookup), then the key, then its turn on the probe threads (it waits
 * while their loops are too delayed to time a hop honestly). A refused request costs a counter and, for
 * a well-formed unknown key, one store lookup; never a body. A call that
 * waited for its turn is let in with the moment the turn came
 * (`turnAt`): its timeouts start there, not at its arrival.
 */
export function createAdmission(inflight: InflightLimit, keyGate: KeyGate, probeQueue?: ProbeQueue): Admission {
  return {
    async admit(route, presentedKey) {
      const slot = inflight.take(route.operation, route.weight);
      if (!slot.ok) return slot;
      let refusal: ConnectError | null;
      let turnAt: number | undefined;
      try {
        refusal = await keyGate(presentedKey);
        // Only a caller with a good key waits for a turn: a wrong key takes no place in the queue.
        if (refusal === null) {
          refusal =
            (await probeQueue?.pass(route.operation, () => {
              turnAt = sharedClockMs();
            })) ?? null;
        }
      } catch (error) {
        slot.release();
        throw error;
      }
      if (refusal === null) return { ok: true, turnAt, release: slot.release };
      slot.release();
      return { ok: false, error: refusal };
    },
  };
}

/** Told when a slot is taken, given back, or refused; metrics listen here. */
export interface InflightObserver {
  admitted(slots: number): void;
  released(slots: number): void;
  rejected(operation: string): void;
}

export interface InflightLimitOptions {
  /** SITEDIAG_MAX_INFLIGHT: diagnostic requests held at once, from their arrival to their answer. */
  readonly max: number;
  readonly observer?: InflightObserver;
}

/** A slot, or the refusal to give one. `release` may be called more than once; only the first counts. */
export type InflightSlot = { readonly ok: true; release(): void } | { readonly ok: false; readonly error: ConnectError };

export interface InflightLimit {
  /** `weight` slots at once (a batch holds as many as it runs items at once), at most the whole cap. */
  take(operation: string, weight?: number): InflightSlot;
}

// Retry-After of the refusal: most checks end within a second or two; a client retrying sooner would only be turned away again.
const RETRY_AFTER = "2";

/**
 * Caps the diagnostic requests held at once on this instance, on every door
 * and both HTTP versions. Each probes targets for up to 30 s, so an
 * unbounded number would let a burst of calls exhaust sockets and memory.
 * A slot is taken when the request arrives, before its key is looked up or
 * its body read, and given back when its response is over: a caller
 * trickling a body holds a slot like one waiting for a probe, so neither can
 * pile up beyond the cap. A request over the cap is refused with
 * Unavailable (503 on REST and Connect) and a Retry-After; it costs nothing.
 */
export function createInflightLimit(options: InflightLimitOptions): InflightLimit {
  let inflight = 0;
  return {
    take(operation, weight = 1) {
      const slots = Math.min(Math.max(1, weight), options.max);
      if (inflight + slots > options.max) {
        options.observer?.rejected(operation);
        const message = `the server is running its limit of ${options.max} checks at once; retry in ${RETRY_AFTER} seconds (nothing was charged)`;
        return { ok: false, error: new ConnectError(message, Code.Unavailable, { "retry-after": RETRY_AFTER }) };
      }
      inflight += slots;
      options.observer?.admitted(slots);
      let released = false;
      return {
        ok: true,
        release: () => {
          if (released) return;
          released = true;
          inflight -= slots;
          options.observer?.released(slots);
        },
      };
    },
  };
}
