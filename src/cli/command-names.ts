/**
 * Each subcommand's name and its one line for `sitediag --help`, apart from its code: the bin lists the commands
 * and loads only the one that runs (src/cli/run-cli.ts), and each command module takes its own from here.
 */
export const COMMAND_NAMES = {
  serve: { name: "serve", summary: "run the API: REST, Connect, gRPC and gRPC-Web on one port (HOST, PORT)" },
  keys: { name: "keys", summary: "create, list and revoke API keys" },
  check: { name: "check", summary: "is this site up or down, and why? (is-site-down, run from here)" },
  trace: { name: "trace", summary: "where does this URL really redirect, hop by hop? (redirect-check, run from here)" },
  vantages: { name: "vantages", summary: "list the deployment's vantages (live or not), or forget one" },
} as const;
