/**
 * The entry of a diagnostic thread (node:worker_threads): a probe thread
 * whose jobs are whole diagnostics. A check's every hop, its timers and the
 * reading of its result happen on this loop, and the main thread hears of
 * the check twice (asked, answered) however many hops it makes.
 */
import { hostProbeThread } from "./thread-host.js";

hostProbeThread();
