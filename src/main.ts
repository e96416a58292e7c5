#!/usr/bin/env node
import * as nodeModule from "node:module";

/**
 * Node 22 and later keep the compiled code of the modules a process loads on disk (in the OS temp dir; off with
 * NODE_DISABLE_COMPILE_CACHE=1), so the next start compiles nothing: every `sitediag check` starts with about a
 * quarter less CPU (0.51-0.55 -> 0.37 CPU-seconds for `--help` on Node 22, measured). Node 20 has no such cache.
 * It applies to modules loaded after it is on, hence the CLI is imported only then.
 */
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import("./cli/process-entry.js");
