import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { busiestThread, ownThreadId, threadSchedules } from "../../testkit/thread-schedule.js";

/**
 * A child process whose main thread and one worker thread each spin until
 * they have run SPIN_MS on a CPU, pinned to one CPU (taskset), so that
 * whatever else the machine does, each is runnable while the other runs and
 * waits about as long as the other runs. Spinning to a run time rather than
 * a wall time keeps that true on a busy machine too.
 */
const SPIN_MS = 200;
const CHILD = `
const { Worker } = require("node:worker_threads");
const spin = "const fs = require('node:fs'); const ran = () => Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6; const end = ran() + ${SPIN_MS}; while (ran() < end);";
process.stdout.write("ready\\n");
process.stdin.once("data", () => {
  new Worker(spin, { eval: true }).once("exit", () => process.exit(0));
  eval(spin);
});
`;

function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe("thread schedules (/proc/PID/task/TID/schedstat)", () => {
  it("counts a thread's waiting for a core apart from its running", async () => {
    const child = spawn("taskset", ["-c", "0", process.execPath, "-e", CHILD], { stdio: ["pipe", "pipe", "inherit"] });
    const pid = child.pid;
    if (pid === undefined) throw new Error("taskset did not start");
    await once(child.stdout, "data");
    const before = threadSchedules(pid);
    let last = before;
    // Read while the child runs: once it exits its threads are gone with it.
    const reading = setInterval(() => {
      const now = threadSchedules(pid);
      if (now.size > 0) last = now;
    }, 20);
    child.stdin.write("go\n");
    await once(child, "exit");
    clearInterval(reading);
    const busiest = busiestThread(before, last);
    expect(busiest).toBeDefined();
    // Two spinners on one CPU: each ran its share and waited while the other ran its own.
    expect(busiest?.ranMs).toBeGreaterThan(SPIN_MS * 0.8);
    expect(busiest?.waitedMs).toBeGreaterThan(SPIN_MS / 2);
  });

  it("names the thread that ran the most, leaving out the one asked to be left out", () => {
    const own = ownThreadId();
    expect(own).toBeDefined();
    const before = threadSchedules();
    burn(50);
    const after = threadSchedules();
    // This thread burned the most, so it is the busiest until it is left out.
    expect(busiestThread(before, after)?.tid).toBe(own);
    expect(busiestThread(before, after, own)?.tid).not.toBe(own);
    expect(after.get(own ?? -1)?.runNs ?? 0).toBeGreaterThan(before.get(own ?? -1)?.runNs ?? 0);
  });

  it("shows nothing of a process that is not there", () => {
    expect(threadSchedules(2 ** 22 + 1).size).toBe(0);
  });
});
