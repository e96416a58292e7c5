/**
 * A separate process that charges one key many times at once, for the
 * multi-process exactness tests. Run with `node --import tsx`. Reads its job
 * from SITEDIAG_WORKER_JOB, prints "ready", waits for "go" on stdin so all
 * workers start together, then prints a JSON tally and exits.
 */
import { createInterface } from "node:readline";
import type { StoreLocation } from "../../src/config.js";
import { openStore, type OpenStoreOptions } from "../../src/access/open-store.js";

interface Job {
  readonly location: StoreLocation;
  readonly options: OpenStoreOptions;
  readonly digest: string;
  readonly attempts: number;
  readonly cost: number;
  readonly budget: number;
  readonly windowSeconds: number;
}

const job = JSON.parse(process.env.SITEDIAG_WORKER_JOB ?? "{}") as Job;
const store = await openStore(job.location, job.options);
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === "go") break;
lines.close();

const policy = { budget: job.budget, windowSeconds: job.windowSeconds };
const outcomes = await Promise.all(Array.from({ length: job.attempts }, () => store.charge(job.digest, job.cost, policy)));
const tally = { admitted: 0, rejected: 0, unauthenticated: 0 };
for (const outcome of outcomes) tally[outcome.kind] += 1;
await store.close();
process.stdout.write(`${JSON.stringify(tally)}\n`);
