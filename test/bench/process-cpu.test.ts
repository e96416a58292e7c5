import { spawnSync } from "node:child_process";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { processTreeCpuMicros, threadCpuMicros } from "../../bench/process-cpu.js";

/**
 * A worker thread that spins until its own /proc/thread-self/stat shows at
 * least `ticks` clock ticks of CPU (USER_HZ: 100 a second), then says its
 * thread id and waits to be told to go: its CPU is known from the kernel's
 * side, whatever else the machine is doing, so the bench's reading can be
 * held against it with no timing assumed.
 */
const SPINNER = `
const { parentPort } = require("node:worker_threads");
const { readFileSync, readlinkSync } = require("node:fs");
const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
const ticks = () => { const stat = readFileSync("/proc/thread-self/stat", "utf8"); const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); return Number(f[11]) + Number(f[12]); };
while (ticks() < 10);
parentPort.postMessage({ tid, ticks: ticks() });
parentPort.once("message", () => process.exit(0));
`;

let worker: Worker | undefined;
afterEach(async () => {
  await worker?.terminate();
  worker = undefined;
});

describe("threadCpuMicros", () => {
  it("reads each thread of a process by its id, the process's own thread under the process id", async () => {
    worker = new Worker(SPINNER, { eval: true });
    const spun = await new Promise<{ tid: number; ticks: number }>((resolve, reject) => {
      worker?.once("message", resolve);
      worker?.once("error", reject);
    });
    const threads = threadCpuMicros(process.pid);

    expect(threads.has(process.pid)).toBe(true);
    expect(spun.tid).not.toBe(process.pid);
    // The spinner's own reading, in microseconds, is a floor for the bench's later one.
    expect(threads.get(spun.tid)).toBeGreaterThanOrEqual(spun.ticks * 10_000);
    // Every thread's time is the process's: the parts add up to no more than the whole, but for the kernel
    // truncating each reading's user and system time to whole ticks apart (two ticks, 20 ms, at most).
    const sum = [...threads.values()].reduce((total, micros) => total + micros, 0);
    expect(sum).toBeLessThanOrEqual(processTreeCpuMicros(process.pid) + 20_000);
  });

  it("reads nothing of a process that is gone", () => {
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    expect(threadCpuMicros(gone).size).toBe(0);
  });
});
