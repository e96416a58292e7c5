/**
 * The service's server with no access layer (no key check, no credit charge),
 * for the bench's auth-and-credit scenario only: the difference between this
 * and `sitediag serve` is what the access path costs per request. Reads the
 * same environment as `sitediag serve`; stops on SIGTERM.
 */
import { loadConfig } from "../src/config.js";
import { diagnosticRunnerFromConfig } from "../src/runner/runner-from-config.js";
import { startServer } from "../src/server/start-server.js";

const config = loadConfig();
const runner = diagnosticRunnerFromConfig(config, undefined);
const server = await startServer({ config, runner, interceptors: [] });
process.once("SIGTERM", () => {
  void server.close().then(async () => {
    await runner.close();
    process.exit(0);
  });
});
