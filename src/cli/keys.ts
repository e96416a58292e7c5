import { parseArgs } from "node:util";
import type { Config } from "../config.js";
import { isKeyId } from "../access/api-key.js";
import { MAX_KEY_BUDGET, type Usage } from "../access/credit-log.js";
import { checkKeyName, issueKey } from "../access/issue-key.js";
import { openStore } from "../access/open-store.js";
import { StoreUnavailableError, type AccessStore, type KeyRecord } from "../access/store.js";
import { type Command, type CommandIo, EXIT_FAILED, EXIT_OK, EXIT_USAGE, selfCommand } from "./command.js";
import { textTable } from "./report/terminal-text.js";
import { COMMAND_NAMES } from "./command-names.js";

const HELP = `usage:
  sitediag keys create [--name NAME] [--budget N] create a key; the key alone goes to stdout, shown this once
                                                  --name: what \`keys list\` shows (default: "key" and the time)
                                                  --budget: its own credits per window instead of SITEDIAG_CREDIT_BUDGET
  sitediag keys list                              id, name, created, revoked, credits used / budget in the current window
  sitediag keys revoke ID                         revoke a key; its next request is refused, on every instance
  sitediag keys set-budget ID N|default           give a key its own budget, or back to SITEDIAG_CREDIT_BUDGET;
                                                  its next charge uses it, on every instance
`;

/** `sitediag keys ...`: issue, list and revoke API keys in the store SITEDIAG_STORE names. */
export const keysCommand = {
  name: COMMAND_NAMES.keys.name,
  summary: COMMAND_NAMES.keys.summary,
  run: async (argv, io) => {
    // Asked for, help is the answer: stdout, exit 0, wherever --help stands (`keys create --help` too).
    if (argv.some((arg) => arg === "--help" || arg === "-h")) {
      io.stdout.write(HELP);
      return EXIT_OK;
    }
    const [subcommand, ...rest] = argv;
    const run = subcommand === undefined ? undefined : SUBCOMMANDS[subcommand];
    if (run === undefined) {
      io.stderr.write(subcommand === undefined ? HELP : `unknown subcommand "${subcommand}"\n${HELP}`);
      return EXIT_USAGE;
    }
    let parsed: ParsedArgs;
    try {
      parsed = parseArgs({
        args: [...rest],
        options: { name: { type: "string" }, budget: { type: "string" } },
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${HELP}`);
      return EXIT_USAGE;
    }
    return run(parsed, io);
  },
} satisfies Command;

interface ParsedArgs {
  readonly values: { readonly name?: string | undefined; readonly budget?: string | undefined };
  readonly positionals: readonly string[];
}

type Subcommand = (args: ParsedArgs, io: CommandIo) => Promise<number>;

const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  create: async ({ values, positionals }, io) => {
    if (positionals.length > 0) return usage(io, "keys create takes --name NAME, --budget N, and nothing else");
    // A name is for telling keys apart in `keys list`; without one, when it was made does that.
    const name = values.name ?? `key ${isoTime(Date.now())}`;
    const problem = checkKeyName(name);
    if (problem !== undefined) return usage(io, problem.reason);
    const budget = values.budget === undefined ? null : parseBudget(values.budget);
    if (budget === undefined) return usage(io, budgetProblem(values.budget ?? ""));
    return withStore(io, async (store) => {
      const issued = await issueKey(store, name, { budget });
      if (issued === undefined) throw new Error("the key was not stored");
      io.stdout.write(`${issued.secret}\n`);
      const own = budget === null ? "" : ` with its own budget of ${budget} credits`;
      io.stderr.write(`created ${issued.record.id} ("${issued.record.name}")${own}; the key above is shown only this once\n`);
      return EXIT_OK;
    });
  },

  list: async ({ values, positionals }, io) => {
    if (values.name !== undefined || values.budget !== undefined || positionals.length > 0)
      return usage(io, "keys list takes no arguments");
    return withStore(io, async (store) => {
      const policy = { budget: io.config.creditBudget, windowSeconds: io.config.creditWindowSeconds };
      const records = await store.listKeys();
      if (records.length === 0) {
        io.stderr.write(`no keys yet; create one with: ${selfCommand()} keys create\n`);
        return EXIT_OK;
      }
      const rows = await Promise.all(records.map(async (record) => row(record, await store.usage(record.id, policy))));
      io.stdout.write(textTable([["ID", "NAME", "CREATED", "REVOKED", "USED"], ...rows], ""));
      return EXIT_OK;
    });
  },

  revoke: async ({ values, positionals }, io) => {
    const [id, ...extra] = positionals;
    if (id === undefined || extra.length > 0 || values.name !== undefined || values.budget !== undefined)
      return usage(io, "keys revoke takes one key id");
    if (!isKeyId(id)) return usage(io, `"${id}" is not a key id (key_ followed by 16 hex digits; see sitediag keys list)`);
    return withStore(io, async (store) => {
      const outcome = await store.revokeKey(id);
      switch (outcome.kind) {
        case "revoked":
          io.stdout.write(`revoked ${id} ("${outcome.record.name}")\n`);
          return EXIT_OK;
        case "already-revoked":
          io.stdout.write(`${id} ("${outcome.record.name}") was already revoked at ${isoTime(outcome.record.revokedAtMs)}\n`);
          return EXIT_OK;
        case "not-found":
          io.stderr.write(`no key with id ${id}\n`);
          return EXIT_FAILED;
      }
    });
  },

  "set-budget": async ({ values, positionals }, io) => {
    const [id, amount, ...extra] = positionals;
    if (id === undefined || amount === undefined || extra.length > 0 || values.name !== undefined || values.budget !== undefined) {
      return usage(io, "keys set-budget takes a key id and a budget (a whole number, or default)");
    }
    if (!isKeyId(id)) return usage(io, `"${id}" is not a key id (key_ followed by 16 hex digits; see sitediag keys list)`);
    const budget = amount === "default" ? null : parseBudget(amount);
    if (budget === undefined) return usage(io, budgetProblem(amount));
    return withStore(io, async (store) => {
      const record = await store.setKeyBudget(id, budget);
      if (record === undefined) {
        io.stderr.write(`no key with id ${id}\n`);
        return EXIT_FAILED;
      }
      const now =
        budget === null
          ? `the instance's budget (SITEDIAG_CREDIT_BUDGET, ${io.config.creditBudget} here)`
          : `its own budget of ${budget} credits`;
      io.stdout.write(`${id} ("${record.name}") now has ${now} per ${io.config.creditWindowSeconds}-second window\n`);
      return EXIT_OK;
    });
  },
};

/** A key's budget as given on the command line; undefined when it is not a whole number from 1 to MAX_KEY_BUDGET. */
function parseBudget(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const budget = Number(text);
  return budget >= 1 && budget <= MAX_KEY_BUDGET ? budget : undefined;
}

function budgetProblem(text: string): string {
  return `"${text}" is not a budget: give a whole number of credits from 1 to ${MAX_KEY_BUDGET}`;
}

async function withStore(io: CommandIo, work: (store: AccessStore) => Promise<number>): Promise<number> {
  let store: AccessStore | undefined;
  try {
    store = await openStore(io.config.store);
    return await work(store);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    io.stderr.write(`cannot reach the key store (${describeLocation(io.config)}): ${error.reason}\n`);
    return EXIT_FAILED;
  } finally {
    await store?.close();
  }
}

function usage(io: CommandIo, problem: string): number {
  io.stderr.write(`${problem}\n${HELP}`);
  return EXIT_USAGE;
}

function row(record: KeyRecord, usage: Usage): string[] {
  // An asterisk marks a key's own budget, so it is not mistaken for the instance's.
  return [
    record.id,
    record.name,
    isoTime(record.createdAtMs),
    isoTime(record.revokedAtMs),
    `${usage.used}/${usage.budget}${record.budget === null ? "" : "*"}`,
  ];
}

function isoTime(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Where the store is, without a password a redis:// URL might carry. */
function describeLocation(config: Config): string {
  if (config.store.kind === "sqlite") return `sqlite:${config.store.path}`;
  if (config.store.kind === "redis-cluster")
    return `redis+cluster://${config.store.nodes.map(({ host, port }) => `${host.includes(":") ? `[${host}]` : host}:${port}`).join(",")}`;
  const url = new URL(config.store.url);
  url.password = "";
  url.username = "";
  return url.toString();
}
