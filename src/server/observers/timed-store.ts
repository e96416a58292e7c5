import type { AccessStore } from "../../access/store.js";
import type { Metrics } from "../../observability/metrics.js";

/**
 * The access store, timing the calls on a request's path (charge, key
 * lookup, the readiness ping) and counting charge decisions and credits.
 * Administrative calls (keys create/list/revoke) pass through untimed.
 */
export function timedStore(store: AccessStore, metrics: Pick<Metrics, "storeDuration" | "creditCharges" | "creditsCharged">): AccessStore {
  const timed = <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    const stop = metrics.storeDuration.startTimer({ store: store.kind, operation });
    return call().then(
      (value) => {
        stop({ outcome: "ok" });
        return value;
      },
      (error: unknown) => {
        stop({ outcome: "error" });
        throw error;
      },
    );
  };
  return {
    kind: store.kind,
    insertKey: (record, options) => store.insertKey(record, options),
    findKeyByDigest: (digest) => timed("find_key", () => store.findKeyByDigest(digest)),
    listKeys: () => store.listKeys(),
    countKeys: () => store.countKeys(),
    revokeKey: (id) => store.revokeKey(id),
    setKeyBudget: (id, budget) => store.setKeyBudget(id, budget),
    charge: async (digest, cost, policy) => {
      const outcome = await timed("charge", () => store.charge(digest, cost, policy));
      metrics.creditCharges.inc({ decision: outcome.kind });
      if (outcome.kind === "admitted") metrics.creditsCharged.inc(cost);
      return outcome;
    },
    refund: (receipt, credits) => timed("refund", () => store.refund(receipt, credits)),
    usage: (keyId, policy) => store.usage(keyId, policy),
    ping: () => timed("ping", () => store.ping()),
    close: () => store.close(),
  };
}
