import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccessInterceptor } from "../../src/access/access-interceptor.js";
import { issueKey } from "../../src/access/issue-key.js";
import { openStore, type OpenStoreOptions } from "../../src/access/open-store.js";
import type { AccessStore } from "../../src/access/store.js";
import { USAGE_HEADER_NAMES } from "../../src/access/usage-headers.js";
import type { Config, StoreLocation } from "../../src/config.js";
import { startTestService, type TestService } from "../fixtures/service-harness.js";

/** The real server with the real access layer on a real store, as `sitediag serve` wires it, in this process. */
export interface AccessService {
  readonly service: TestService;
  readonly store: AccessStore;
  /** A key issued on the store before the first call. */
  readonly apiKey: string;
  readonly keyId: string;
  close(): Promise<void>;
}

export interface AccessServiceOptions {
  /** Defaults to a SQLite file in a fresh temp directory. */
  readonly store?: StoreLocation;
  readonly storeOptions?: OpenStoreOptions;
  readonly config?: Partial<Config>;
}

export async function startAccessService(options: AccessServiceOptions = {}): Promise<AccessService> {
  const dir = mkdtempSync(join(tmpdir(), "sitediag-load-"));
  const location = options.store ?? { kind: "sqlite", path: join(dir, "access.db") };
  const store = await openStore(location, options.storeOptions);
  const config = { creditBudget: 1_000_000, creditWindowSeconds: 86_400, ...options.config };
  const issued = await issueKey(store, "load");
  if (issued === undefined) throw new Error("no key was issued");
  const service = await startTestService({
    config,
    interceptors: [createAccessInterceptor({ store, config })],
    ready: () => store.ping().then(() => true),
    exposeHeaders: USAGE_HEADER_NAMES,
  });
  return {
    service,
    store,
    apiKey: issued.secret,
    keyId: issued.record.id,
    close: async () => {
      await service.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `count` calls with at most `concurrency` at once, stopping early (and failing) past `deadlineMs`. */
export async function bounded<T>(count: number, concurrency: number, deadlineMs: number, call: (index: number) => Promise<T>): Promise<T[]> {
  const stopAt = Date.now() + deadlineMs;
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      if (Date.now() > stopAt) throw new Error(`load did not finish ${count} calls within ${deadlineMs} ms (${results.length} done)`);
      const index = next++;
      results.push(await call(index));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}
