/**
 * The entry of a probe thread that runs hops only (node:worker_threads): the
 * threaded prober's default. A layer above that runs whole jobs on the
 * thread has an entry of its own that hosts the same loop with its runner.
 */
import { hostProbeThread } from "./probe-thread-host.js";

hostProbeThread();
