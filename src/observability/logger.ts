import { type DestinationStream, type Logger, pino } from "pino";
import { API_KEY_HEADER, API_KEY_QUERY_PARAMETER } from "../shared/credential-names.js";
import type { LogLevel } from "../config.js";
import { REDACTED } from "./redaction.js";

export type { Logger } from "pino";

export interface LoggerOptions {
  /** LOG_LEVEL. */
  readonly level: LogLevel;
  /** Where JSON lines go: the process's stdout, or a test's buffer. */
  readonly destination: DestinationStream;
  /** Human-readable, coloured lines (pino-pretty) on the terminal instead of JSON; for a person at a TTY. */
  readonly pretty?: boolean;
}

/**
 * Key material is kept out of lines by construction (request lines carry
 * redacted URLs and no headers); these paths are a second net for anything
 * that logs a header map or a parsed query by mistake.
 */
const REDACT_PATHS = [
  `headers["${API_KEY_HEADER}"]`,
  `*.headers["${API_KEY_HEADER}"]`,
  `query.${API_KEY_QUERY_PARAMETER}`,
  `*.query.${API_KEY_QUERY_PARAMETER}`,
  API_KEY_QUERY_PARAMETER,
  "apiKey",
  "secret",
];

/** The service's structured logger: one JSON object per line, pino's fields plus ours. */
export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const settings = {
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    base: { service: "sitediag" },
  };
  const pretty = options.pretty === true ? await prettyStream() : undefined;
  return pino(settings, pretty ?? options.destination);
}

/**
 * pino-pretty writes to the process's stdout itself. It is loaded on demand,
 * so a deployment installed without it still logs, as JSON.
 */
async function prettyStream(): Promise<DestinationStream | undefined> {
  try {
    const { default: build } = await import("pino-pretty");
    return build({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,service", sync: true });
  } catch {
    return undefined;
  }
}
