import { describe, expect, it } from "vitest";
import { jsonText, terminalSafe, terminalText } from "../../../src/cli/report/terminal-safe.js";

/** Every code point the terminal must never get raw: C0, DEL, C1, the bidi marks, embeddings, overrides and isolates. */
const UNSAFE = [
  ...Array.from({ length: 0x20 }, (_, code) => code),
  ...Array.from({ length: 0x21 }, (_, index) => 0x7f + index),
  0x200e,
  0x200f,
  ...Array.from({ length: 5 }, (_, index) => 0x202a + index),
  ...Array.from({ length: 4 }, (_, index) => 0x2066 + index),
];

describe("terminalText", () => {
  it("shows each control character as its escape: \\xNN below 256, \\uNNNN above", () => {
    for (const code of UNSAFE) {
      const shown = terminalText(`a${String.fromCharCode(code)}b`);
      const escape = code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
      expect(shown).toBe(`a${escape}b`);
    }
    expect(terminalText("\u009b2J\u009d0;t\u009c")).toBe("\\x9b2J\\x9d0;t\\x9c");
    expect(terminalText("evil\u202egnp.exe")).toBe("evil\\u202egnp.exe");
  });

  it("keeps every other character: printable ASCII, latin1 letters, other scripts, emoji, a lone surrogate", () => {
    const kept = "plain ASCII ~!@#$%^&*()_+ é ñ ÿ \u00a0 日本語 עברית \u{1f600} \u2028 \ud800";
    // U+2028 is no terminal control (it is escaped in JSON); the lone surrogate is left for the encoder.
    expect(terminalText(kept)).toBe(kept);
  });

  it("is linear: a megabyte of controls is cleaned at once", () => {
    const text = "\u009b".repeat(1_000_000);
    expect(terminalText(text)).toBe("\\x9b".repeat(1_000_000));
  });
});

describe("terminalSafe", () => {
  it("cleans every string of plain data, keys included, and leaves numbers, booleans and null", () => {
    const result = {
      status: 200,
      up: true,
      none: null,
      reason: "x\u001b[2J",
      fields: [["x-evil", "a\u009bb"]],
      nested: { "\u009bkey": ["\u202e"] },
    };
    expect(terminalSafe(result)).toEqual({
      status: 200,
      up: true,
      none: null,
      reason: "x\\x1b[2J",
      fields: [["x-evil", "a\\x9bb"]],
      nested: { "\\x9bkey": ["\\u202e"] },
    });
    expect(result.reason).toBe("x\u001b[2J");
  });

  it("keeps a target's __proto__ and constructor as fields, from objects with or without a prototype", () => {
    const map: Record<string, string> = Object.create(null) as Record<string, string>;
    Object.defineProperty(map, "__proto__", { value: "p\u009b", enumerable: true });
    Object.defineProperty(map, "constructor", { value: "c", enumerable: true });
    const safe = terminalSafe({ headers: map });
    expect(Object.getOwnPropertyDescriptor(safe.headers, "__proto__")?.value).toBe("p\\x9b");
    expect(Object.hasOwn(safe.headers, "constructor")).toBe(true);
    expect(Object.getPrototypeOf(safe.headers)).toBe(Object.prototype);
  });
});

describe("jsonText", () => {
  it("escapes DEL, C1, the bidi controls and U+2028/2029, and parses back to the same value", () => {
    const value = { text: "a\u007f\u0080\u009b\u009f\u200e\u202e\u2028\u2029\u2066 é \u00a0 \u{1f600} \u0001" };
    const json = jsonText(value);
    expect(json).toBe('{"text":"a\\u007f\\u0080\\u009b\\u009f\\u200e\\u202e\\u2028\\u2029\\u2066 é \u00a0 \u{1f600} \\u0001"}');
    expect(JSON.parse(json)).toEqual(value);
  });

  it("is JSON.stringify's text for anything without those characters", () => {
    const value = { a: [1, "two", null, true], b: { c: "naïve 日本" } };
    expect(jsonText(value)).toBe(JSON.stringify(value));
  });
});
