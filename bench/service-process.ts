import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { closedLoopbackPort, quietLoopbackPort } from "../testkit/loopback-ports.js";
import { type BenchChild, startChild, waitForOk } from "./child.js";

const run = promisify(execFile);

/** The CLI as the package's bin runs it, once built: dist/bench/ -> dist/bin/sitediag.js (scripts/build-bin.ts). */
const MAIN = join(import.meta.dirname, "..", "bin", "sitediag.js");
/** The same server without the access layer, for measuring what the access layer adds. */
const BARE = join(import.meta.dirname, "bare-service.js");

export interface ServiceProcess {
  readonly url: string;
  readonly child: BenchChild;
  /** The API key the bench created for this store; empty for the bare service. */
  readonly apiKey: string;
  stop(): Promise<void>;
}

export interface ServiceSetup {
  /** sqlite:PATH or redis://... */
  readonly store: string;
  /** The target's HTTP port, which redirect-check must be allowed to visit. */
  readonly tracePort: number;
  /** false: start the bare server (no keys, no credits). */
  readonly withAccess?: boolean;
  readonly extraEnv?: Readonly<Record<string, string>>;
  readonly nodeArgs?: readonly string[];
  /** Another build's compiled CLI (bench/compare.ts runs two side by side); this tree's dist/bin/sitediag.js when undefined. */
  readonly main?: string;
}

/**
 * Starts `sitediag serve` from dist/ on a free loopback port with loopback
 * opened to probing and a budget that never runs out, after creating a key
 * with `sitediag keys create` against the same store, as an operator would.
 */
export async function startService(setup: ServiceSetup): Promise<ServiceProcess> {
  const port = await quietLoopbackPort();
  // Every bench target is an IP literal; should a name ever slip in, it is
  // asked of a closed loopback port and fails, never of the machine's resolver.
  const nowhereDns = await closedLoopbackPort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOST: "127.0.0.1",
    PORT: String(port),
    SITEDIAG_STORE: setup.store,
    SITEDIAG_ALLOW_CIDRS: "127.0.0.0/8",
    SITEDIAG_DNS_SERVERS: `127.0.0.1:${nowhereDns}`,
    SITEDIAG_TRACE_PORTS: String(setup.tracePort),
    SITEDIAG_CREDIT_BUDGET: "1000000000",
    SITEDIAG_MAX_INFLIGHT: "4096",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    ...setup.extraEnv,
  };
  const withAccess = setup.withAccess ?? true;
  const main = setup.main ?? MAIN;
  const apiKey = withAccess ? await createKey(main, env) : "";
  const child = startChild(process.execPath, [...(setup.nodeArgs ?? []), withAccess ? main : BARE, ...(withAccess ? ["serve"] : [])], {
    env,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForOk(`${url}/readyz`, child);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { url, child, apiKey, stop: () => child.stop(35_000) };
}

async function createKey(main: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run(process.execPath, [main, "keys", "create", "--name", "bench"], { env });
  const key = stdout.trim();
  if (!key.startsWith("sd_")) throw new Error(`keys create printed no key: ${stdout}`);
  return key;
}
