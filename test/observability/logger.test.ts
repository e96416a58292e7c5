import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.js";

function capture() {
  const lines: string[] = [];
  return { destination: { write: (line: string) => void lines.push(line) }, lines };
}

describe("createLogger", () => {
  it("writes JSON lines at or above LOG_LEVEL only", async () => {
    const out = capture();
    const logger = await createLogger({ level: "warn", destination: out.destination });
    logger.info({ a: 1 }, "quiet");
    logger.warn({ a: 2 }, "loud");
    expect(out.lines).toHaveLength(1);
    expect(JSON.parse(out.lines[0] ?? "")).toMatchObject({ level: 40, msg: "loud", a: 2, service: "sitediag" });
  });

  it("censors key material logged by mistake in headers or a parsed query", async () => {
    const out = capture();
    const logger = await createLogger({ level: "info", destination: out.destination });
    logger.info(
      { headers: { "x-api-key": "sd_header" }, query: { api_key: "sd_query" }, req: { headers: { "x-api-key": "sd_nested" } } },
      "oops",
    );
    const text = out.lines.join("");
    expect(text).not.toContain("sd_");
    expect(text).toContain("[REDACTED]");
  });
});
