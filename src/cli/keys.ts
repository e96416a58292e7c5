import { parseArgs } from "node:util";
import type { Config } from "../config.js";
import { isKeyId } from "../access/api-key.js";
import { checkKeyName, issueKey } from "../access/issue-key.js";
import { openStore } from "../access/open-store.js";
import { StoreUnavailableError, type AccessStore, type KeyRecord } from "../access/store.js";
import { type Command, type CommandIo, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from "./command.js";
import { textTable } from "./report/text-table.js";


const HELP = `usage:
  sitediag keys create --name NAME   create a key; the key alone goes to stdout, shown this once
  sitediag keys list                 id, name, created, revoked, credits used in the current window
  sitediag keys revoke ID            revoke a key; its next request is refused, on every instance
`;

/** `sitediag keys ...`: issue, list and revoke API keys in the store SITEDIAG_STORE names. */
export const keysCommand = {
  name: "keys",
  summary: "create, list and revoke API keys",
  run: async (argv, io) => {
    const [subcommand, ...rest] = argv;
    const run = subcommand === undefined ? undefined : SUBCOMMANDS[subcommand];
    if (run === undefined) {
      io.stderr.write(subcommand === undefined || subcommand === "--help" || subcommand === "-h" ? HELP : `unknown subcommand "${subcommand}"\n${HELP}`);
      return subcommand === "--help" || subcommand === "-h" ? EXIT_OK : EXIT_USAGE;
    }
    let parsed: ParsedArgs;
    try {
      parsed = parseArgs({ args: [...rest], options: { name: { type: "string" } }, allowPositionals: true, strict: true });
    } catch (error) {
      io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${HELP}`);
      return EXIT_USAGE;
    }
    return run(parsed, io);
  },
} satisfies Command;

interface ParsedArgs {
  readonly values: { readonly name?: string | undefined };
  readonly positionals: readonly string[];
}

type Subcommand = (args: ParsedArgs, io: CommandIo) => Promise<number>;

const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  create: async ({ values, positionals }, io) => {
    const name = values.name;
    if (name === undefined || positionals.length > 0) return usage(io, "keys create takes --name NAME and nothing else");
    const problem = checkKeyName(name);
    if (problem !== undefined) return usage(io, problem.reason);
    return withStore(io, async (store) => {
      const issued = await issueKey(store, name);
      if (issued === undefined) throw new Error("the key was not stored");
      io.stdout.write(`${issued.secret}\n`);
      io.stderr.write(`created ${issued.record.id} ("${issued.record.name}"); the key above is shown only this once\n`);
      return EXIT_OK;
    });
  },

  list: async ({ values, positionals }, io) => {
    if (values.name !== undefined || positionals.length > 0) return usage(io, "keys list takes no arguments");
    return withStore(io, async (store) => {
      const policy = { budget: io.config.creditBudget, windowSeconds: io.config.creditWindowSeconds };
      const records = await store.listKeys();
      if (records.length === 0) {
        io.stderr.write("no keys yet; create one with: sitediag keys create --name NAME\n");
        return EXIT_OK;
      }
      const rows = await Promise.all(records.map(async (record) => row(record, (await store.usage(record.id, policy)).used, policy.budget)));
      io.stdout.write(textTable([["ID", "NAME", "CREATED", "REVOKED", "USED"], ...rows], ""));
      return EXIT_OK;
    });
  },

  revoke: async ({ values, positionals }, io) => {
    const [id, ...extra] = positionals;
    if (id === undefined || extra.length > 0 || values.name !== undefined) return usage(io, "keys revoke takes one key id");
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
};

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

function row(record: KeyRecord, used: number, budget: number): string[] {
  return [record.id, record.name, isoTime(record.createdAtMs), isoTime(record.revokedAtMs), `${used}/${budget}`];
}

function isoTime(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Where the store is, without a password a redis:// URL might carry. */
function describeLocation(config: Config): string {
  if (config.store.kind === "sqlite") return `sqlite:${config.store.path}`;
  const url = new URL(config.store.url);
  url.password = "";
  url.username = "";
  return url.toString();
}
