import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureHead, MAX_CAPTURED_HEAD_BYTES, redactCookie } from "../../../src/probe/http/head-capture.js";
import type { HopResponse } from "../../../src/probe/hop-types.js";
import { type RawTarget, startRawTarget } from "../../fixtures/raw-targets.js";
import { loopbackProber, type LoopbackProber } from "../../fixtures/test-env.js";

describe("captureHead: a head's fields for people, bounded, no cookie's value", () => {
  it("keeps names as sent, values, order and repeats; stands in the lower-cased name where none was kept", () => {
    const fields = [
      ["x-a", "1"],
      ["set-cookie", "sid=secret; Path=/; HttpOnly"],
      ["x-a", "2"],
    ] as const;
    expect(captureHead(fields, ["X-A", "Set-Cookie"])).toEqual({
      fields: [
        ["X-A", "1"],
        ["Set-Cookie", "sid=[redacted]"],
        ["x-a", "2"],
      ],
      truncated: false,
    });
  });

  it("stops at the first field past 64 KiB of field lines and says so", () => {
    const value = "v".repeat(1000);
    const fields = Array.from({ length: 100 }, (_, i) => [`x-pad-${i}`, value] as const);
    const captured = captureHead(fields, undefined);
    expect(captured.truncated).toBe(true);
    const bytes = captured.fields.reduce((sum, [name, text]) => sum + name.length + text.length + 4, 0);
    expect(bytes).toBeLessThanOrEqual(MAX_CAPTURED_HEAD_BYTES);
    expect(bytes + "x-pad-99".length + value.length + 4).toBeGreaterThan(MAX_CAPTURED_HEAD_BYTES);
    expect(captured.fields.map(([name]) => name)).toEqual(fields.slice(0, captured.fields.length).map(([name]) => name));
  });

  it("reduces any Set-Cookie value to its cookie's name, whatever it holds", () => {
    expect(redactCookie("id=abc; Path=/")).toBe("id=[redacted]");
    expect(redactCookie(" id = abc")).toBe("id=[redacted]");
    expect(redactCookie("novalue")).toBe("=[redacted]");
    expect(redactCookie("")).toBe("=[redacted]");
    expect(redactCookie("=only-value; Secure")).toBe("=[redacted]");
  });
});

describe("the probe keeps an HTTP/1.1 head's fields only when asked", () => {
  let prober: LoopbackProber;
  let target: RawTarget;
  const head = [
    "HTTP/1.1 200 OK",
    "X-Mixed-Case: one",
    "Set-Cookie: sid=s3cr3t; Path=/; HttpOnly",
    "X-Folded: a",
    "  b",
    "x-mixed-case: two",
    "Content-Length: 0",
    "Connection: close",
  ];

  beforeAll(async () => {
    prober = loopbackProber();
    target = await startRawTarget({
      kind: "bytes",
      answer: (path) => {
        if (path === "/big")
          return Buffer.from(
            `HTTP/1.1 200 OK\r\n${Array.from({ length: 100 }, (_, i) => `X-Pad-${i}: ${"v".repeat(1000)}\r\n`).join("")}Content-Length: 0\r\nConnection: close\r\n\r\n`,
            "latin1",
          );
        return Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1");
      },
    });
  });
  afterAll(async () => {
    await target?.close();
    await prober?.close();
  });

  async function answer(path: string, captureHead?: boolean): Promise<HopResponse> {
    const outcome = await prober.hop({
      url: new URL(`http://127.0.0.1:${target.port}${path}`),
      method: "GET",
      timeoutMs: 3_000,
      ports: { kind: "fetch-safe" },
      ...(captureHead === undefined ? {} : { captureHead }),
    });
    if (outcome.kind !== "response") throw new Error(outcome.kind);
    return outcome.response;
  }

  it("names as the server spelled them, in order, a folded value joined, the cookie's value never kept", async () => {
    const response = await answer("/", true);
    expect(response.headFields).toEqual({
      fields: [
        ["X-Mixed-Case", "one"],
        ["Set-Cookie", "sid=[redacted]"],
        ["X-Folded", "a b"],
        ["x-mixed-case", "two"],
        ["Content-Length", "0"],
        ["Connection", "close"],
      ],
      truncated: false,
    });
    expect(JSON.stringify(response.headFields)).not.toContain("s3cr3t");
    // What the diagnostics read is unchanged: lower-cased names, the cookie as sent.
    expect(response.headers["set-cookie"]).toBe("sid=s3cr3t; Path=/; HttpOnly");
  });

  it("nothing when not asked", async () => {
    expect((await answer("/")).headFields).toBeNull();
    expect((await answer("/", false)).headFields).toBeNull();
  });

  it("the first 64 KiB of a larger head, marked as cut", async () => {
    const response = await answer("/big", true);
    expect(response.status).toBe(200);
    expect(response.headFields?.truncated).toBe(true);
    expect(response.headFields?.fields[0]).toEqual(["X-Pad-0", "v".repeat(1000)]);
    expect(response.headFields?.fields.length).toBeLessThan(70);
  });
});
