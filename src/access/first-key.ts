import { API_KEY_HEADER } from "./api-key.js";
import { issueKey, type IssuedKey } from "./issue-key.js";
import type { AccessStore } from "./store.js";

export const FIRST_KEY_NAME = "first key";

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
export async function ensureFirstKey(store: AccessStore, output: FirstKeyOutput, baseUrl: string): Promise<IssuedKey | undefined> {
  if ((await store.countKeys()) > 0) return undefined;
  const issued = await issueKey(store, FIRST_KEY_NAME, { onlyIfEmpty: true });
  if (issued === undefined) return undefined;
  const base = baseUrl.replace(/\/+$/, "");
  output.write(
    [
      `sitediag: this store had no API keys, so one was created (${issued.record.id}, "${issued.record.name}").`,
      `It is shown only this once; keep it somewhere safe:`,
      ``,
      `  ${issued.secret}`,
      ``,
      // A placeholder, not a real site: pasted unchanged it is refused as an invalid URL, so the
      // hint itself never sends traffic anywhere.
      `Call the API with it (put the site to check in place of <site>):`,
      `  curl -H '${API_KEY_HEADER}: ${issued.secret}' '${base}/api/v1/is-site-down?url=https://<site>/'`,
      `More keys: sitediag keys create --name NAME   (list: sitediag keys list, revoke: sitediag keys revoke ID)`,
      ``,
    ].join("\n"),
  );
  return issued;
}
