import { parseArgs } from "node:util";

// The command line of check and trace read in one place, so a mistake gets
// one short line naming it (and the option meant, when it is a typo), never
// Node's parseArgs wording nor the whole help after it.

export type OptionKinds = Readonly<Record<string, { readonly type: "string" | "boolean"; readonly short?: string }>>;

export type ReadArguments =
  | { readonly ok: true; readonly values: Readonly<Record<string, string | boolean | undefined>>; readonly positionals: readonly string[] }
  | { readonly ok: false; readonly problem: string };

/**
 * Reads `argv` against `options`. Every option token is judged before
 * parseArgs sees the line: an unknown one is named with the closest known
 * option when one is near (`--jsn`: did you mean --json?), or with `elsewhere`'s
 * word when it belongs to another form of the command (`--csv`: only with
 * --batch); a string option without its value and a boolean given one are
 * said as such. `--` ends the options, as parseArgs has it.
 */
export function readArguments(
  argv: readonly string[],
  options: OptionKinds,
  allowPositionals: boolean,
  elsewhere: Readonly<Record<string, string>> = {},
): ReadArguments {
  const names = Object.keys(options);
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "--") break;
    if (token.startsWith("--")) {
      const [name = "", value] = splitOnce(token.slice(2));
      const kind = Object.hasOwn(options, name) ? options[name] : undefined;
      if (kind === undefined) return { ok: false, problem: unknownOption(`--${name}`, name, names, elsewhere) };
      if (kind.type === "boolean" && value !== undefined) return { ok: false, problem: `--${name} takes no value` };
      if (kind.type === "string" && value === undefined) {
        const next = argv[i + 1];
        if (next === undefined || next.startsWith("--")) return { ok: false, problem: `--${name} needs a value` };
        if (next.startsWith("-") && next !== "-")
          return { ok: false, problem: `--${name} needs a value (one that starts with "-" is written --${name}=${next.slice(0, 20)})` };
        i += 1;
      }
    } else if (token.startsWith("-") && token.length > 1) {
      // Short options; only -h is offered, and a lone "-" is a positional (standard input).
      const letters = token.slice(1);
      const known = names.find((name) => options[name]?.short === letters);
      if (known === undefined) return { ok: false, problem: unknownOption(token, letters, names, elsewhere) };
    } else if (!allowPositionals) {
      return { ok: false, problem: `unexpected argument ${JSON.stringify(token)}` };
    }
  }
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, allowPositionals, strict: true });
    return { ok: true, values, positionals };
  } catch (error) {
    // Every case parseArgs refuses is judged above; this is a case of its own we did not foresee.
    return { ok: false, problem: `cannot read the command line: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** A boolean option's value: true when given. */
export function flag(values: Readonly<Record<string, string | boolean | undefined>>, name: string): boolean {
  return values[name] === true;
}

/** A string option's value, undefined when not given. */
export function text(values: Readonly<Record<string, string | boolean | undefined>>, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * The line to print for a command line that could not be read: the problem,
 * then where the options are listed (never the whole help: the problem is
 * what the person needs to see).
 */
export function usageProblem(command: string, problem: string): string {
  return `${command}: ${problem}\nRun "${command} --help" for every option.\n`;
}

function splitOnce(text: string): [string, string | undefined] {
  const at = text.indexOf("=");
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function unknownOption(token: string, name: string, names: readonly string[], elsewhere: Readonly<Record<string, string>>): string {
  const shown = token.length > 40 ? `${token.slice(0, 40)}...` : token;
  const there = Object.hasOwn(elsewhere, name) ? elsewhere[name] : undefined;
  if (there !== undefined) return `${shown} ${there}`;
  const near = closest(name, names);
  return near === undefined
    ? `unknown option ${JSON.stringify(shown)}`
    : `unknown option ${JSON.stringify(shown)} (did you mean --${near}?)`;
}

/** The known name nearest `name` by edit distance, when it is near enough to be a typo (at most 2 edits, and fewer than half its letters). */
export function closest(name: string, names: readonly string[]): string | undefined {
  if (name.length > 64) return undefined;
  let best: { readonly name: string; readonly distance: number } | undefined;
  for (const candidate of names) {
    const distance = editDistance(name.toLowerCase(), candidate);
    if (distance <= 2 && distance < Math.max(candidate.length, 2) / 2 + 1 && (best === undefined || distance < best.distance))
      best = { name: candidate, distance };
  }
  return best?.name;
}

/** Levenshtein distance (insertions, deletions, substitutions); both words are short (at most 64 letters). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
