import { BATCH } from "./limits.js";

/**
 * The size rule of every batch. The access layer checks it before anything
 * is charged (a batch's price is its size, so a batch outside the rule has
 * no price, only a reason to refuse), and the service checks it again for
 * callers that reach it without that layer.
 */
export function batchSizeProblem(count: number): string | undefined {
  if (count === 0) return "a batch needs at least one item";
  if (count > BATCH.maxItems) return `a batch holds at most ${BATCH.maxItems} items, this one has ${count}`;
  return undefined;
}
