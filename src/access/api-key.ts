import { hash, randomBytes, randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

/**
 * The shape of an API key: `sd_`, 22 random base62 characters (about 131 bits)
 * and a 6-character base62 CRC32 of everything before it. The checksum lets a
 * typo be refused without a store lookup; the randomness is what makes a key
 * unguessable. Only the SHA-256 digest of the whole key is ever stored.
 */
export const API_KEY_PREFIX = "sd_";
const RANDOM_LENGTH = 22;
const CHECKSUM_LENGTH = 6;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

export { API_KEY_HEADER, API_KEY_QUERY_PARAMETER } from "../shared/credential-names.js";

/** A freshly generated key: the secret (shown once) and what may be stored. */
export interface GeneratedKey {
  readonly secret: string;
  readonly digest: string;
}

export function generateApiKey(): GeneratedKey {
  let body = "";
  for (let i = 0; i < RANDOM_LENGTH; i++) body += BASE62[randomInt(BASE62.length)];
  const unchecked = API_KEY_PREFIX + body;
  const secret = unchecked + checksumOf(unchecked);
  return { secret, digest: digestApiKey(secret) };
}

/** True when the text has the key's shape and its checksum matches: worth a store lookup. */
export function isWellFormedApiKey(text: string): boolean {
  if (!KEY_PATTERN.test(text)) return false;
  const unchecked = text.slice(0, text.length - CHECKSUM_LENGTH);
  return checksumOf(unchecked) === text.slice(text.length - CHECKSUM_LENGTH);
}

/**
 * The only form of a key that is stored or compared: lowercase hex SHA-256.
 * One-shot (crypto.hash, Node >= 20.12): a Hash object per call cost 2.3 us
 * against 0.6-0.9, twice on every call (the admission's gate, the charge).
 */
export function digestApiKey(secret: string): string {
  return hash("sha256", secret, "hex");
}

/** Public identifier of a key, safe to show, log and pass to `keys revoke`. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString("hex")}`;
}

const KEY_ID_PATTERN = /^key_[0-9a-f]{16}$/;

export function isKeyId(text: string): boolean {
  return KEY_ID_PATTERN.test(text);
}

function checksumOf(text: string): string {
  let value = crc32(Buffer.from(text, "utf8"));
  let encoded = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    encoded = BASE62[value % BASE62.length] + encoded;
    value = Math.floor(value / BASE62.length);
  }
  return encoded;
}
