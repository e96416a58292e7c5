import { describe, expect, it } from "vitest";
import { findHeadEnd, parseResponseHead, skipEmptyLines } from "../../../src/probe/http/response-head.js";

const bytes = (text: string) => Buffer.from(text, "latin1");

describe("findHeadEnd", () => {
  it.each([
    ["CRLF CRLF", "HTTP/1.1 200 OK\r\na: b\r\n\r\nbody", 25],
    ["LF LF", "HTTP/1.1 200 OK\na: b\n\nbody", 22],
    ["LF CRLF", "HTTP/1.1 200 OK\na: b\n\r\nbody", 23],
    ["CRLF LF", "HTTP/1.1 200 OK\r\na: b\r\n\nbody", 24],
    ["not yet", "HTTP/1.1 200 OK\r\na: b\r\n\r", -1],
    ["a lone CR does not end a line", "HTTP/1.1 200 OK\r\r\n", -1],
  ])("%s", (_name, text, end) => {
    expect(findHeadEnd(bytes(text), 0, 0)).toBe(end);
  });

  it("finds the same end when bytes arrive one at a time (resuming where it stopped)", () => {
    const text = bytes("HTTP/1.1 200 OK\r\na: b\n\r\nbody");
    let scanFrom = 0;
    let end = -1;
    for (let length = 1; length <= text.length && end === -1; length++) {
      end = findHeadEnd(text.subarray(0, length), 0, scanFrom);
      scanFrom = length;
    }
    expect(end).toBe(24);
  });

  it("skips empty lines before a status line", () => {
    expect(skipEmptyLines(bytes("\r\n\nHTTP/1.1"), 0)).toBe(3);
  });
});

describe("parseResponseHead", () => {
  const parse = (text: string) => parseResponseHead(bytes(text));

  it("reads the status line and fields, names lower-cased, values trimmed, Latin-1", () => {
    expect(parse("HTTP/1.0 301 Moved\r\nLocation:  /caf\u00c3\u00a9/ \t\r\nX-A:b\r\n\r\n")).toEqual({
      ok: true,
      head: {
        version: "1.0",
        status: 301,
        statusText: "Moved",
        fields: [
          ["location", "/caf\u00c3\u00a9/"],
          ["x-a", "b"],
        ],
      },
    });
  });

  it.each([
    ["no reason phrase", "HTTP/1.1 204\r\n\r\n", 204, ""],
    ["an empty reason phrase", "HTTP/1.1 200 \r\n\r\n", 200, ""],
    ["control bytes in the reason phrase (clients ignore it)", "HTTP/1.1 200 O\u0001K\r\n\r\n", 200, "O\u0001K"],
  ])("accepts %s", (_name, text, status, statusText) => {
    expect(parse(text)).toMatchObject({ ok: true, head: { status, statusText } });
  });

  it("refuses a stray CR before any other rule, wherever in the head it is", () => {
    expect(parse("HTTP/1.1 200 OK\r\nx(y: z\r\nlater: a\rb\r\n\r\n")).toEqual({ ok: false, rule: "a CR not followed by LF" });
    expect(parse("HTTP/9 200 OK\r\nx: a\rb\r\n\r\n")).toEqual({ ok: false, rule: "a CR not followed by LF" });
    expect(parse("HTTP/1.1 200 OK\r\nx(y: z\r\n\r\n")).toEqual({ ok: false, rule: "an invalid byte in a field name" });
  });

  it("reads a head at any offset of a larger buffer, and from a plain Uint8Array", () => {
    const text = "HTTP/1.1 302 Found\nlocation: /next\nx: 1\n\n";
    const expected = {
      ok: true,
      head: {
        version: "1.1",
        status: 302,
        statusText: "Found",
        fields: [
          ["location", "/next"],
          ["x", "1"],
        ],
      },
    };
    const padded = Buffer.from(`junk\r\n${text}trailing body`, "latin1");
    expect(parseResponseHead(padded.subarray(6, 6 + text.length))).toEqual(expected);
    expect(parseResponseHead(new Uint8Array(Buffer.from(text, "latin1")))).toEqual(expected);
  });

  it("joins an obs-fold to the previous value with one SP", () => {
    expect(parse("HTTP/1.1 200 OK\r\nx: a \r\n \t b\r\ny: c\r\n\r\n")).toMatchObject({
      ok: true,
      head: {
        fields: [
          ["x", "a b"],
          ["y", "c"],
        ],
      },
    });
  });

  it.each([
    ["an unknown version", "HTTP/1.2 200 OK\r\n\r\n"],
    ["HTTP/2 on an HTTP/1 connection", "HTTP/2 200\r\n\r\n"],
    ["a two-digit status", "HTTP/1.1 20 OK\r\n\r\n"],
    ["a four-digit status", "HTTP/1.1 2000 OK\r\n\r\n"],
    ["a status below 100", "HTTP/1.1 099 OK\r\n\r\n"],
    ["two spaces before the status", "HTTP/1.1  200 OK\r\n\r\n"],
    ["a lower-case protocol name", "http/1.1 200 OK\r\n\r\n"],
    ["space before the colon", "HTTP/1.1 200 OK\r\nx : y\r\n\r\n"],
    ["an empty field name", "HTTP/1.1 200 OK\r\n: y\r\n\r\n"],
    ["a field line without a colon", "HTTP/1.1 200 OK\r\nxy\r\n\r\n"],
    ["a separator in a field name", "HTTP/1.1 200 OK\r\nx(y: z\r\n\r\n"],
    ["obs-text in a field name", "HTTP/1.1 200 OK\r\nx\u00e9: z\r\n\r\n"],
    ["NUL in a value", "HTTP/1.1 200 OK\r\nx: a\u0000b\r\n\r\n"],
    ["DEL in a value", "HTTP/1.1 200 OK\r\nx: a\u007fb\r\n\r\n"],
    ["a lone CR", "HTTP/1.1 200 OK\r\nx: a\rb\r\n\r\n"],
    ["whitespace before the first field", "HTTP/1.1 200 OK\r\n x: y\r\n\r\n"],
  ])("refuses %s", (_name, text) => {
    expect(parse(text).ok).toBe(false);
  });
});
