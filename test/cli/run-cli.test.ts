import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/run-cli.js";
import { runCli } from "../../src/cli/run-cli.js";
import { VERSION } from "../../src/package-info.js";
import { createCliIo } from "../fixtures/cli-io.js";

describe("sitediag command dispatch", () => {
  it("lists every registered command on --help and exits 0", async () => {
    const cli = createCliIo({});
    expect(await runCli(["--help"], COMMANDS, cli.io)).toBe(0);
    for (const command of COMMANDS) expect(cli.stdout()).toContain(`  ${command.name}`);
    expect(cli.stdout()).toContain("serve");
  });

  it("prints usage to stderr and exits 2 with no command or an unknown one", async () => {
    const none = createCliIo({});
    expect(await runCli([], COMMANDS, none.io)).toBe(2);
    expect(none.stderr()).toContain("usage: sitediag <command>");
    const unknown = createCliIo({});
    expect(await runCli(["frobnicate"], COMMANDS, unknown.io)).toBe(2);
    expect(unknown.stderr()).toContain('unknown command "frobnicate"');
  });

  it.each(
    [
      ...COMMANDS.flatMap((command) => [
        [command.name, "--help"],
        [command.name, "-h"],
      ]),
      ["keys", "create", "--help"],
      ["trace", "--batch", "rows.csv", "--help"],
      ["check", "--json", "--help"],
    ].map((argv) => [argv.join(" "), argv] as const),
  )("answers `sitediag %s` on stdout, exit 0: help asked for is the answer, not an error", async (_, argv) => {
    const cli = createCliIo({});
    expect(await runCli(argv, COMMANDS, cli.io)).toBe(0);
    expect(cli.stdout()).toMatch(/^usage:/);
    expect(cli.stderr()).toBe("");
  });

  it("prints the version", async () => {
    const cli = createCliIo({});
    expect(await runCli(["--version"], COMMANDS, cli.io)).toBe(0);
    expect(cli.stdout()).toBe(`${VERSION}\n`);
  });

  it.each([
    ["PORT", "eighty"],
    ["SITEDIAG_STORE", "postgres://127.0.0.1/x"],
    ["SITEDIAG_ALLOW_CIDRS", "10.0.0.0/99"],
    ["LOG_LEVEL", "loud"],
  ])("stops before running a command when %s is %s, naming the variable, exit 2", async (variable, value) => {
    const cli = createCliIo({ [variable]: value });
    expect(await runCli(["serve"], COMMANDS, cli.io)).toBe(2);
    expect(cli.stderr()).toMatch(new RegExp(`^sitediag: configuration error in ${variable}: `));
  });
});
