/**
 * npm run fuzz -- [--seed N] [--cases N] [--seconds N] [--families heads,h2] [--concurrency N] [--replay family:seed,...]
 *
 * The hostile-target fuzzer (test/load/hostile-targets.test.ts) on demand:
 * each option becomes its SITEDIAG_FUZZ_* variable. `--cases` without
 * `--seconds` runs that many cases however long they take.
 */
import { spawn } from "node:child_process";

const OPTIONS: Readonly<Record<string, string>> = {
  "--seed": "SITEDIAG_FUZZ_SEED",
  "--cases": "SITEDIAG_FUZZ_CASES",
  "--seconds": "SITEDIAG_FUZZ_SECONDS",
  "--families": "SITEDIAG_FUZZ_FAMILIES",
  "--concurrency": "SITEDIAG_FUZZ_CONCURRENCY",
  "--replay": "SITEDIAG_FUZZ_REPLAY",
  "--journal": "SITEDIAG_FUZZ_JOURNAL",
};

const env: NodeJS.ProcessEnv = { ...process.env };
const args = process.argv.slice(2);
for (let at = 0; at < args.length; at += 2) {
  const [flag, inline] = (args[at] ?? "").split("=", 2) as [string, string | undefined];
  const name = Object.hasOwn(OPTIONS, flag) ? OPTIONS[flag] : undefined;
  const value = inline ?? args[at + 1];
  if (name === undefined || value === undefined) {
    console.error(
      `usage: npm run fuzz -- ${Object.keys(OPTIONS)
        .map((option) => `[${option} VALUE]`)
        .join(" ")}`,
    );
    process.exit(2);
  }
  if (inline !== undefined) at -= 1;
  env[name] = value;
}

const child = spawn("npx", ["vitest", "run", "--project", "load", "test/load/hostile-targets.test.ts"], { stdio: "inherit", env });
child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
