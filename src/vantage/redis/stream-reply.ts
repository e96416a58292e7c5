// Entries of an XREAD / XREADGROUP / XAUTOCLAIM reply, read totally: the
// reply's shape is Redis's, but the entries are whatever was written to the
// stream, and anyone with the Redis can write there.

export interface StreamEntry {
  readonly id: string;
  /** The first value of each field name. */
  readonly fields: ReadonlyMap<string, string>;
}

const MAX_FIELDS = 32;

/** [[stream, [[id, [field, value, ...]], ...]], ...] (or null: nothing came) as entries; anything else is skipped. */
export function readStreamEntries(reply: unknown): StreamEntry[] {
  const entries: StreamEntry[] = [];
  if (!Array.isArray(reply)) return entries;
  for (const stream of reply) {
    if (!Array.isArray(stream) || !Array.isArray(stream[1])) continue;
    for (const raw of stream[1] as unknown[]) {
      if (!Array.isArray(raw) || typeof raw[0] !== "string") continue;
      const fields = new Map<string, string>();
      const flat: unknown = raw[1];
      if (Array.isArray(flat)) {
        for (let index = 0; index + 1 < flat.length && index < 2 * MAX_FIELDS; index += 2) {
          const name: unknown = flat[index];
          const value: unknown = flat[index + 1];
          if (typeof name === "string" && typeof value === "string" && !fields.has(name)) fields.set(name, value);
        }
      }
      entries.push({ id: raw[0], fields });
    }
  }
  return entries;
}
