/**
 * The service's server with no access layer (no key check, no credit charge),
 * for the bench's auth-and-credit scenario only: the difference between this
 * and `sitediag serve` is what the access path costs per request. Reads the
 * same environment as `sitediag serve`; stops on SIGTERM.
 */
import { loadConfig } from "../src/config.js";
import { diagnosticEnvFromConfig } from "../src/diagnostics/diagnostic-env-from-config.js";
import { startServer } from "../src/server/start-server.js";

const config = loadConfig();
const env = diagnosticEnvFromConfig(config, undefined);
const server = await startServer({ config, env, interceptors: [] });
process.once("SIGTERM", () => {
  void server.close().then(async () => {
    await env.prober.close();
    process.exit(0);
  });
});
