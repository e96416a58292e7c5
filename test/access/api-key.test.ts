import { describe, expect, it } from "vitest";
import { digestApiKey, generateApiKey, generateKeyId, isKeyId, isWellFormedApiKey } from "../../src/access/api-key.js";
import { mistypedKey } from "../fixtures/store-harness.js";

describe("API keys", () => {
  it("look like sd_ + 28 base62 characters and pass their own checksum", () => {
    const { secret, digest } = generateApiKey();
    expect(secret).toMatch(/^sd_[0-9A-Za-z]{28}$/);
    expect(isWellFormedApiKey(secret)).toBe(true);
    expect(digest).toBe(digestApiKey(secret));
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("are different every time", () => {
    const secrets = new Set(Array.from({ length: 1_000 }, () => generateApiKey().secret));
    expect(secrets.size).toBe(1_000);
  });

  it("reject every single-character typo by checksum, before any lookup", () => {
    const { secret } = generateApiKey();
    const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (let i = 3; i < secret.length; i++) {
      for (const replacement of alphabet) {
        if (replacement === secret[i]) continue;
        const typo = secret.slice(0, i) + replacement + secret.slice(i + 1);
        expect(isWellFormedApiKey(typo), typo).toBe(false);
      }
    }
  });

  it("mistyped by the tests' helper differ from themselves, whatever their last character", () => {
    // The helper once put a fixed "0" last: a key already ending in "0" (1 in 62) stayed valid.
    const endings = new Map<string, string>();
    for (let i = 0; i < 20_000 && endings.size < 62; i++) {
      const { secret } = generateApiKey();
      endings.set(secret.slice(-1), secret);
    }
    expect(endings.size).toBe(62);
    for (const secret of endings.values()) {
      expect(mistypedKey(secret), secret).not.toBe(secret);
      expect(isWellFormedApiKey(mistypedKey(secret)), secret).toBe(false);
    }
  });

  it("reject other shapes", () => {
    const { secret } = generateApiKey();
    for (const text of ["", "sd_", secret.slice(0, -1), `${secret}0`, secret.replace("sd_", "sk_"), ` ${secret}`, secret.toUpperCase()]) {
      expect(isWellFormedApiKey(text), text).toBe(false);
    }
  });

  it("have public ids distinct from the secret", () => {
    const id = generateKeyId();
    expect(isKeyId(id)).toBe(true);
    expect(isKeyId("sd_abc")).toBe(false);
  });

  it("are digested as the stored digests were: SHA-256 of the UTF-8 text, lowercase hex", () => {
    // Fixed vectors (sha256sum of the same bytes): a change of encoding or digest would orphan every stored key.
    expect(digestApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(digestApiKey("\u00e9")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
  });
});
