import { type RedisFanout, redisAskerFromConfig } from "../vantage/fanout-from-config.js";
import { type Command, type CommandIo, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from "./command.js";
import { textTable } from "./report/terminal-text.js";
import { COMMAND_NAMES } from "./command-names.js";

const HELP = `usage:
  sitediag vantages list          every vantage seen within SITEDIAG_VANTAGE_FORGET_AFTER (default 24h):
                                  live or not, last seen, its instances, the build each runs and its
                                  clock's offset from this machine's
  sitediag vantages forget NAME   retire a vantage: \`--vantages all\` stops asking it (a live one
                                  comes back with its next heartbeat, within a second)

The vantages are the deployment's, on the Redis of SITEDIAG_STORE (docs/vantages.md). On the SQLite
store there is one vantage, this machine ("local"), and nothing to list or forget.
`;

/** `sitediag vantages ...`: which regions the deployment knows, and retiring one. */
export const vantagesCommand = {
  name: COMMAND_NAMES.vantages.name,
  summary: COMMAND_NAMES.vantages.summary,
  run: async (argv, io) => {
    if (argv.some((arg) => arg === "--help" || arg === "-h")) {
      io.stdout.write(HELP);
      return EXIT_OK;
    }
    const [subcommand, ...rest] = argv;
    if (subcommand !== "list" && subcommand !== "forget") {
      io.stderr.write(subcommand === undefined ? HELP : `unknown subcommand "${subcommand}"\n${HELP}`);
      return EXIT_USAGE;
    }
    if (subcommand === "list" ? rest.length > 0 : rest.length !== 1) {
      io.stderr.write(`${subcommand === "list" ? "vantages list takes nothing else" : "vantages forget takes one NAME"}\n${HELP}`);
      return EXIT_USAGE;
    }
    if (io.config.store.kind === "sqlite") {
      io.stderr.write(
        'sitediag: vantages: SITEDIAG_STORE is the SQLite store: its one vantage is this machine ("local"); vantages are a Redis deployment\'s (docs/vantages.md)\n',
      );
      return EXIT_USAGE;
    }
    let lastTrouble: unknown;
    let fanout: RedisFanout | undefined;
    try {
      fanout = await redisAskerFromConfig(io.config, (error) => (lastTrouble = error));
    } catch (error) {
      const cause = lastTrouble ?? error;
      io.stderr.write(
        `sitediag: vantages: cannot reach the Redis of SITEDIAG_STORE (${cause instanceof Error ? cause.message : String(cause)})\n`,
      );
      return EXIT_FAILED;
    }
    if (fanout === undefined) return EXIT_USAGE;
    try {
      return subcommand === "list" ? await list(fanout, io) : await forget(fanout, rest[0] ?? "", io);
    } finally {
      await fanout.close();
    }
  },
} satisfies Command;

async function list(fanout: RedisFanout, io: CommandIo): Promise<number> {
  const [known, mine] = await Promise.all([fanout.known(), fanout.clockOffset().catch(() => undefined)]);
  if (known.length === 0) {
    io.stdout.write("no vantage seen within SITEDIAG_VANTAGE_FORGET_AFTER\n");
    return EXIT_OK;
  }
  const now = Date.now();
  const rows = [["VANTAGE", "STATE", "LAST SEEN", "INSTANCE", "BUILD", "CLOCK OFFSET"]];
  for (const vantage of known) {
    const instances = [...vantage.instances].sort((a, b) => b.lastSeen - a.lastSeen);
    instances.forEach((instance, index) => {
      const offset = instance.clockOffsetMs === undefined || mine === undefined ? "-" : `${signed(instance.clockOffsetMs - mine)} ms`;
      rows.push([
        index === 0 ? vantage.info.name : "",
        index === 0 ? (vantage.live ? "live" : "not live") : "",
        `${new Date(instance.lastSeen).toISOString()} (${ago(now - instance.lastSeen)})`,
        `${instance.id}${instance.live ? "" : " (gone)"}`,
        instance.version ?? "-",
        offset,
      ]);
    });
  }
  io.stdout.write(textTable(rows, ""));
  return EXIT_OK;
}

async function forget(fanout: RedisFanout, name: string, io: CommandIo): Promise<number> {
  const count = await fanout.forget(name);
  if (count === 0) {
    io.stderr.write(`sitediag: vantages forget: no vantage "${name}" is known\n`);
    return EXIT_FAILED;
  }
  io.stdout.write(
    `forgot ${name} (${count} instance${count === 1 ? "" : "s"}); \`--vantages all\` no longer asks it unless it beats again\n`,
  );
  return EXIT_OK;
}

function signed(ms: number): string {
  return ms > 0 ? `+${ms}` : String(ms);
}

function ago(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1_000));
  if (seconds < 120) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  return minutes < 120 ? `${minutes} min ago` : `${Math.round(minutes / 60)} h ago`;
}
