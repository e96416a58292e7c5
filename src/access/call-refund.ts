import { createContextKey } from "@connectrpc/connect";

/**
 * What a charged call may give back: a diagnostic the service could not run
 * for its own reasons (overload: it could not start in time, its probe thread
 * died) is not paid for. The service says so once per diagnostic it could not
 * run (`unit`); the access interceptor gives the total back to the store once,
 * when the call is over, so a call is refunded at most what it was charged,
 * in one store write.
 */
export interface CallRefund {
  /** One diagnostic of this call was not run: its unit price comes back (at most the call's whole price in all). */
  unit(): void;
}

export const callRefundKey = createContextKey<CallRefund | undefined>(undefined, { description: "gives back the price of a diagnostic the service could not run" });

/** The tab of one charged call: `credits` over `units` diagnostics. */
export function refundTab(credits: number, units: number): CallRefund & { owed(): number } {
  const unitCredits = units > 0 ? credits / units : credits;
  let given = 0;
  return {
    unit: () => {
      given = Math.min(units, given + 1);
    },
    owed: () => Math.round(given * unitCredits),
  };
}
