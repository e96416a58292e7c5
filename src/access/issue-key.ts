import type { StoreHint } from "./store-hint.js";
import { API_KEY_HEADER, generateApiKey, generateKeyId } from "./api-key.js";
import type { AccessStore, KeyRecord } from "./store.js";

/** A key just created: the secret exists only here and in the caller's hands. */
export interface IssuedKey {
  readonly secret: string;
  readonly record: KeyRecord;
}

const MAX_KEY_NAME_LENGTH = 100;

/** Why a key name was refused. */
export interface KeyNameProblem {
  readonly rule: "empty" | "too-long" | "control-characters";
  readonly reason: string;
}

export function checkKeyName(name: string): KeyNameProblem | undefined {
  if (name.trim() === "") return { rule: "empty", reason: "a key name must not be empty" };
  if (name.length > MAX_KEY_NAME_LENGTH) return { rule: "too-long", reason: `a key name is at most ${MAX_KEY_NAME_LENGTH} characters` };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return { rule: "control-characters", reason: "a key name must not contain control characters" };
  return undefined;
}

/**
 * Generates a key and stores its digest. With onlyIfEmpty the key is stored
 * only if the store holds no key yet (checked atomically, so two instances
 * starting together issue one first key); undefined means another won.
 */
export async function issueKey(
  store: AccessStore,
  name: string,
  options: { readonly onlyIfEmpty?: boolean; readonly budget?: number | null } = {},
): Promise<IssuedKey | undefined> {
  const problem = checkKeyName(name);
  if (problem !== undefined) throw new RangeError(problem.reason);
  const { secret, digest } = generateApiKey();
  const record: KeyRecord = {
    id: generateKeyId(),
    name: name.trim(),
    createdAtMs: Date.now(),
    revokedAtMs: null,
    budget: options.budget ?? null,
  };
  const stored = await store.insertKey(
    { id: record.id, name: record.name, digest, createdAtMs: record.createdAtMs, budget: record.budget },
    options,
  );
  return stored ? { secret, record } : undefined;
}

const FIRST_KEY_NAME = "first key";

export interface FirstKeyOutput {
  /** Where the one-time announcement goes (the terminal that ran `sitediag serve`, not the log). */
  write(text: string): unknown;
}

/**
 * On a store with no keys, issues one and prints it once with a ready-to-run
 * call, so a newcomer can make a request within a minute. On any other store
 * it does nothing. The key is printed here and nowhere else; it never reaches
 * the log.
 */
export async function ensureFirstKey(
  store: AccessStore,
  output: FirstKeyOutput,
  baseUrl: string,
  cli = "sitediag",
  hint?: StoreHint,
): Promise<IssuedKey | undefined> {
  if ((await store.countKeys()) > 0) return undefined;
  const issued = await issueKey(store, FIRST_KEY_NAME, { onlyIfEmpty: true });
  if (issued === undefined) return undefined;
  const base = baseUrl.replace(/\/+$/, "");
  output.write(
    [
      `sitediag: this store${hint === undefined ? "" : ` (${hint.where})`} had no API keys, so one was created (${issued.record.id}, "${issued.record.name}").`,
      `It is shown only this once; keep it somewhere safe:`,
      ``,
      `  ${issued.secret}`,
      ``,
      // A placeholder, not a real site: pasted unchanged it is refused as an invalid URL, so the
      // hint itself never sends traffic anywhere.
      `Call the API with it (put the site to check in place of <site>):`,
      `  curl -H '${API_KEY_HEADER}: ${issued.secret}' '${base}/api/v1/is-site-down?url=https://<site>/'`,
      // `cli` is how this very process was started (a clone has no `sitediag` on PATH).
      // With the store named: an unset SITEDIAG_STORE in another shell is the local SQLite file, not this service's store.
      hint === undefined
        ? `More keys: ${cli} keys create   (list: ${cli} keys list, revoke: ${cli} keys revoke ID)`
        : `More keys, in this same store: ${hint.env} ${cli} keys create   (list: keys list, revoke: keys revoke ID, with the same SITEDIAG_STORE)`,
      ``,
    ].join("\n"),
  );
  return issued;
}
