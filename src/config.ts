import { VERSION } from "./package-info.js";
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { CREDITS, REDIRECT_TRACE, SITE_CHECK } from "./shared/limits.js";
import { DEFAULT_CERT_EXPIRY_WARN_DAYS } from "./diagnostics/certificate-expiry.js";
import { DEFAULT_DOMAIN_EXPIRY_WARN_DAYS } from "./registration/registration-warnings.js";

/** Everything the service reads from its environment, parsed and validated once. */
export interface Config {
  /** HOST: interface to listen on. */
  readonly host: string;
  /** PORT: the one port for REST, Connect, gRPC and gRPC-Web. */
  readonly port: number;
  /** SITEDIAG_STORE: where keys and credit charges live. */
  readonly store: StoreLocation;
  /** SITEDIAG_ALLOW_CIDRS: non-public ranges deliberately opened to probing. */
  readonly allowCidrs: readonly string[];
  /** SITEDIAG_DNS_SERVERS: resolve targets through these servers instead of the system resolver. */
  readonly dnsServers: readonly string[];
  /** SITEDIAG_TRACE_PORTS: ports redirect-check may visit. */
  readonly tracePorts: readonly number[];
  /** SITEDIAG_SITE_TIMEOUT_MS: is-site-down per-request timeout. */
  readonly siteTimeoutMs: number;
  /** SITEDIAG_TRACE_HOP_TIMEOUT_MS: redirect-check per-request timeout. */
  readonly traceHopTimeoutMs: number;
  /** SITEDIAG_TRACE_TOTAL_TIMEOUT_MS: redirect-check whole-trace budget. */
  readonly traceTotalTimeoutMs: number;
  /** SITEDIAG_CREDIT_BUDGET: credits per key per rolling window. */
  readonly creditBudget: number;
  /** SITEDIAG_CREDIT_WINDOW_SECONDS: length of the rolling window. */
  readonly creditWindowSeconds: number;
  /** SITEDIAG_CA_FILE: extra PEM CA certificates trusted for targets, beside Node's defaults. */
  readonly caFile: string | undefined;
  /** SITEDIAG_MAX_INFLIGHT: diagnostics running at once on this instance. */
  readonly maxInflight: number;
  /** SITEDIAG_METRICS_PORT: serve /metrics on a separate port when set. */
  readonly metricsPort: number | undefined;
  /** LOG_LEVEL: pino level. */
  readonly logLevel: LogLevel;
  /** SITEDIAG_WORKERS: serve processes sharing the port (node:cluster when above 1). */
  readonly workers: number;
  /** SITEDIAG_PROBE_THREADS: worker threads that run the probes (0: on the main thread). */
  readonly probeThreads: number;
  /** SITEDIAG_PROBE_MAX_LOOP_DELAY_MS: probe-loop delay beyond which new checks wait for the probe threads. */
  readonly probeMaxLoopDelayMs: number;
  /** SITEDIAG_PROBE_QUEUE: checks that may wait for the probe threads at once; beyond it, 503. */
  readonly probeQueue: number;
  /** SITEDIAG_HOSTS_FILE: the hosts file consulted before DNS, as the system does. */
  readonly hostsFile: string;
  /** SITEDIAG_MAX_RESPONSE_HEAD_BYTES: largest response head a probe reads from a target. */
  readonly maxResponseHeadBytes: number;
  /** SITEDIAG_REUSE_CONNECTIONS: a same-origin redirect's next request reuses its connection, as browsers do. */
  readonly reuseConnections: boolean;
  /** SITEDIAG_CERT_EXPIRY_WARN_DAYS: warn certificate_expires_soon when a certificate has fewer whole days left (0: never). */
  readonly certExpiryWarnDays: number;
  /** SITEDIAG_DOMAIN_EXPIRY_WARN_DAYS: warn domain_expires_soon when the registration (RDAP, details) has fewer whole days left (0: never). */
  readonly domainExpiryWarnDays: number;
  /** SITEDIAG_RDAP_BOOTSTRAP_FILE: an IANA dns.json to use instead of the shipped snapshot; undefined for the snapshot. */
  readonly rdapBootstrapFile: string | undefined;
  /** The port's own limits on what a caller may send and hold (SITEDIAG_MAX_REQUEST_BYTES ...). */
  readonly intake: IntakeLimits;
  /** The vantage this instance belongs to (SITEDIAG_VANTAGE, SITEDIAG_VANTAGE_LABEL, SITEDIAG_VANTAGE_LOCATION, SITEDIAG_VANTAGE_MAX_JOBS). */
  readonly vantage: VantageSettings;
}

/** Where this instance looks from, as other instances sharing its Redis see it (docs/vantages.md). */
export interface VantageSettings {
  /** Lower-case letters, digits and '-', 1 to 32 characters, starting with a letter or digit; `local` by default. */
  readonly name: string;
  readonly label: string | undefined;
  readonly location: string | undefined;
  /** Jobs of other instances this one runs at once as a worker of its vantage. */
  readonly maxJobs: number;
  /** SITEDIAG_VANTAGE_FORGET_AFTER: a vantage silent this long is forgotten (ms); until then `all` asks it and it is answered unavailable at once. */
  readonly forgetAfterMs: number;
  /** The build this instance announces: the package version, or SITEDIAG_VANTAGE_VERSION (a region on another build, in tests). */
  readonly version: string;
}

/**
 * What one caller may make the port hold, before any work is done for it.
 * Every field is a setting; docs/operations.md explains the numbers.
 */
export interface IntakeLimits {
  /** SITEDIAG_MAX_REQUEST_BYTES: one request message, on the wire and after decompression. */
  readonly maxRequestBytes: number;
  /** SITEDIAG_REQUEST_TIMEOUT_MS: time to receive a whole request body, HTTP/1.1 and per HTTP/2 stream. */
  readonly requestTimeoutMs: number;
  /** SITEDIAG_HTTP2_MAX_STREAMS: concurrent streams one HTTP/2 connection may open. */
  readonly http2MaxStreams: number;
  /** SITEDIAG_HTTP2_SESSION_MEMORY_MIB: memory one HTTP/2 session may hold before new streams are refused. */
  readonly http2SessionMemoryMiB: number;
  /** SITEDIAG_MAX_CONNECTIONS: open connections the port accepts in all. */
  readonly maxConnections: number;
  /** SITEDIAG_MAX_CONNECTIONS_PER_PEER: open connections one peer address may hold. */
  readonly maxConnectionsPerPeer: number;
}

/** Defaults of the intake limits: nginx's 100 streams, a 64 KiB message (the request head is 32 KiB: start-server.ts). */
export const DEFAULT_INTAKE: IntakeLimits = {
  maxRequestBytes: 64 * 1024,
  requestTimeoutMs: 30_000,
  http2MaxStreams: 100,
  http2SessionMemoryMiB: 8,
  maxConnections: 8_192,
  maxConnectionsPerPeer: 1_024,
};

export type StoreLocation =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "redis"; readonly url: string }
  /** SITEDIAG_STORE=redis+cluster://[:password@]host:port[,host:port...]: seed nodes of a Redis Cluster. */
  | { readonly kind: "redis-cluster"; readonly nodes: readonly RedisNode[]; readonly password: string | undefined };

export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A configuration value that cannot be used; names the variable so start-up can say what to fix. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = "ConfigError";
  }
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** Parses the whole configuration, or throws the first ConfigError found. */
export function loadConfig(env: Environment = process.env): Config {
  const workers = workerCount(env, "SITEDIAG_WORKERS");
  return {
    host: text(env, "HOST", "0.0.0.0"),
    port: integer(env, "PORT", 8080, 0, 65_535),
    store: storeLocation(env, "SITEDIAG_STORE", "sqlite:./data/sitediag.db"),
    allowCidrs: list(env, "SITEDIAG_ALLOW_CIDRS").map((cidr) => checkCidr("SITEDIAG_ALLOW_CIDRS", cidr)),
    dnsServers: list(env, "SITEDIAG_DNS_SERVERS").map((server) => checkDnsServer("SITEDIAG_DNS_SERVERS", server)),
    tracePorts: portList(env, "SITEDIAG_TRACE_PORTS", REDIRECT_TRACE.ports),
    siteTimeoutMs: integer(env, "SITEDIAG_SITE_TIMEOUT_MS", SITE_CHECK.requestTimeoutMs, 1, 600_000),
    traceHopTimeoutMs: integer(env, "SITEDIAG_TRACE_HOP_TIMEOUT_MS", REDIRECT_TRACE.hopTimeoutMs, 1, 600_000),
    traceTotalTimeoutMs: integer(env, "SITEDIAG_TRACE_TOTAL_TIMEOUT_MS", REDIRECT_TRACE.totalTimeoutMs, 1, 3_600_000),
    creditBudget: integer(env, "SITEDIAG_CREDIT_BUDGET", CREDITS.budget, 1, 1_000_000_000),
    creditWindowSeconds: integer(env, "SITEDIAG_CREDIT_WINDOW_SECONDS", CREDITS.windowSeconds, 1, 31_536_000),
    caFile: optionalText(env, "SITEDIAG_CA_FILE"),
    maxInflight: integer(env, "SITEDIAG_MAX_INFLIGHT", 1_024, 1, 1_000_000),
    metricsPort: optionalInteger(env, "SITEDIAG_METRICS_PORT", 1, 65_535),
    logLevel: logLevel(env, "LOG_LEVEL", "info"),
    workers,
    probeThreads: probeThreadCount(env, "SITEDIAG_PROBE_THREADS", workers),
    probeMaxLoopDelayMs: integer(env, "SITEDIAG_PROBE_MAX_LOOP_DELAY_MS", 10, 1, 60_000),
    probeQueue: integer(env, "SITEDIAG_PROBE_QUEUE", 1_024, 0, 1_000_000),
    hostsFile: text(env, "SITEDIAG_HOSTS_FILE", "/etc/hosts"),
    maxResponseHeadBytes: integer(env, "SITEDIAG_MAX_RESPONSE_HEAD_BYTES", 256 * 1024, 16 * 1024, 16 * 1024 * 1024),
    reuseConnections: flag(env, "SITEDIAG_REUSE_CONNECTIONS", true),
    certExpiryWarnDays: integer(env, "SITEDIAG_CERT_EXPIRY_WARN_DAYS", DEFAULT_CERT_EXPIRY_WARN_DAYS, 0, 3_650),
    domainExpiryWarnDays: integer(env, "SITEDIAG_DOMAIN_EXPIRY_WARN_DAYS", DEFAULT_DOMAIN_EXPIRY_WARN_DAYS, 0, 3_650),
    rdapBootstrapFile: optionalText(env, "SITEDIAG_RDAP_BOOTSTRAP_FILE"),
    intake: {
      maxRequestBytes: integer(env, "SITEDIAG_MAX_REQUEST_BYTES", DEFAULT_INTAKE.maxRequestBytes, 1_024, 16 * 1024 * 1024),
      requestTimeoutMs: integer(env, "SITEDIAG_REQUEST_TIMEOUT_MS", DEFAULT_INTAKE.requestTimeoutMs, 100, 600_000),
      http2MaxStreams: integer(env, "SITEDIAG_HTTP2_MAX_STREAMS", DEFAULT_INTAKE.http2MaxStreams, 1, 10_000),
      http2SessionMemoryMiB: integer(env, "SITEDIAG_HTTP2_SESSION_MEMORY_MIB", DEFAULT_INTAKE.http2SessionMemoryMiB, 1, 1_024),
      maxConnections: integer(env, "SITEDIAG_MAX_CONNECTIONS", DEFAULT_INTAKE.maxConnections, 1, 1_000_000),
      maxConnectionsPerPeer: integer(env, "SITEDIAG_MAX_CONNECTIONS_PER_PEER", DEFAULT_INTAKE.maxConnectionsPerPeer, 1, 1_000_000),
    },
    vantage: {
      name: vantageName(env, "SITEDIAG_VANTAGE"),
      label: boundedText(env, "SITEDIAG_VANTAGE_LABEL", 100),
      location: boundedText(env, "SITEDIAG_VANTAGE_LOCATION", 100),
      maxJobs: integer(env, "SITEDIAG_VANTAGE_MAX_JOBS", 64, 1, 10_000),
      forgetAfterMs: duration(env, "SITEDIAG_VANTAGE_FORGET_AFTER", 86_400_000, 10_000, 90 * 86_400_000),
      version: versionText(env, "SITEDIAG_VANTAGE_VERSION"),
    },
  };
}

/** A name callers type and Redis keys carry: short, and nothing a key or a URL query would have to escape. */
function vantageName(env: Environment, name: string): string {
  const value = text(env, name, "local");
  if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(value))
    throw new ConfigError(name, `expected 1 to 32 lower-case letters, digits or '-' (not first), got "${value}"`);
  return value;
}

/** A duration: whole seconds, or a number with s, m, h or d (`24h`, `90s`); ms between `min` and `max`. */
function duration(env: Environment, name: string, fallbackMs: number, minMs: number, maxMs: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallbackMs;
  const match = /^(\d{1,9})([smhd]?)$/.exec(value);
  const unit = { "": 1_000, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match?.[2] ?? ""] ?? 1_000;
  const ms = match === null ? Number.NaN : Number(match[1]) * unit;
  if (!(ms >= minMs && ms <= maxMs))
    throw new ConfigError(
      name,
      `expected a duration such as 24h, 30m or 90s, from ${minMs / 1_000} s to ${maxMs / 86_400_000} days, got "${value}"`,
    );
  return ms;
}

/** The build an instance announces to the others: the package's own unless overridden. */
function versionText(env: Environment, name: string): string {
  const value = raw(env, name);
  if (value === undefined) return VERSION;
  if (!/^[0-9A-Za-z.+_-]{1,64}$/.test(value))
    throw new ConfigError(name, `expected 1 to 64 letters, digits, '.', '+', '_' or '-', got "${value}"`);
  return value;
}

function boundedText(env: Environment, name: string, maxLength: number): string | undefined {
  const value = raw(env, name);
  if (value !== undefined && value.length > maxLength)
    throw new ConfigError(name, `expected at most ${maxLength} characters, got ${value.length}`);
  return value;
}

function raw(env: Environment, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function text(env: Environment, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

function flag(env: Environment, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ConfigError(name, `expected true or false, got "${value}"`);
}

function optionalText(env: Environment, name: string): string | undefined {
  return raw(env, name);
}

function integer(env: Environment, name: string, fallback: number, min: number, max: number): number {
  return optionalInteger(env, name, min, max) ?? fallback;
}

function optionalInteger(env: Environment, name: string, min: number, max: number): number | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `expected a whole number, got "${value}"`);
  const parsed = Number(value);
  if (parsed < min || parsed > max) throw new ConfigError(name, `expected a number from ${min} to ${max}, got ${value}`);
  return parsed;
}

function list(env: Environment, name: string): string[] {
  const value = raw(env, name);
  if (value === undefined) return [];
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function portList(env: Environment, name: string, fallback: readonly number[]): readonly number[] {
  const items = list(env, name);
  if (items.length === 0) return fallback;
  return items.map((item) => {
    if (!/^\d+$/.test(item) || Number(item) < 1 || Number(item) > 65_535) {
      throw new ConfigError(name, `"${item}" is not a port from 1 to 65535`);
    }
    return Number(item);
  });
}

function checkCidr(name: string, cidr: string): string {
  const [address, prefix, ...rest] = cidr.split("/");
  const family = address === undefined ? 0 : isIP(address);
  const maxPrefix = family === 6 ? 128 : 32;
  const prefixOk = prefix !== undefined && /^\d+$/.test(prefix) && Number(prefix) <= maxPrefix;
  if (family === 0 || !prefixOk || rest.length > 0) {
    throw new ConfigError(name, `"${cidr}" is not a CIDR such as 127.0.0.0/8 or ::1/128`);
  }
  return cidr;
}

function checkDnsServer(name: string, server: string): string {
  // Accepted forms: 1.2.3.4, 1.2.3.4:53, ::1, [::1]:53
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  const hostPort = /^([^:]+):(\d+)$/.exec(server);
  const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : hostPort ? [hostPort[1], hostPort[2]] : [server, undefined];
  const portOk = port === undefined || (Number(port) >= 1 && Number(port) <= 65_535);
  if (host === undefined || isIP(host) === 0 || !portOk) {
    throw new ConfigError(name, `"${server}" is not an IP address with an optional port (1.2.3.4, 1.2.3.4:53, [::1]:53)`);
  }
  return server;
}

function storeLocation(env: Environment, name: string, fallback: string): StoreLocation {
  const value = text(env, name, fallback);
  if (value.startsWith("sqlite:")) {
    const path = value.slice("sqlite:".length);
    if (path === "") throw new ConfigError(name, "sqlite: needs a file path, as in sqlite:./data/sitediag.db");
    return { kind: "sqlite", path };
  }
  if (value.startsWith("redis://") || value.startsWith("rediss://")) {
    try {
      new URL(value);
    } catch {
      throw new ConfigError(name, `"${value}" is not a valid redis:// URL`);
    }
    return { kind: "redis", url: value };
  }
  if (value.startsWith("redis+cluster://")) return redisCluster(name, value);
  throw new ConfigError(name, `expected sqlite:<path>, redis://host:port[/db] or redis+cluster://host:port[,host:port...], got "${value}"`);
}

/** redis+cluster://[:password@]host:port[,host:port...]: any reachable node finds the rest of the cluster. */
function redisCluster(name: string, value: string): StoreLocation {
  const rest = value.slice("redis+cluster://".length);
  const at = rest.lastIndexOf("@");
  const credentials = at < 0 ? undefined : rest.slice(0, at);
  const password = credentials === undefined ? undefined : decodeURIComponent(credentials.slice(credentials.indexOf(":") + 1));
  const nodes = (at < 0 ? rest : rest.slice(at + 1))
    .replace(/\/$/, "")
    .split(",")
    .map((seed) => {
      const match = /^([^:[\]]+|\[[0-9a-fA-F:.]+\]):(\d+)$/.exec(seed.trim());
      const port = Number(match?.[2]);
      if (match?.[1] === undefined || !(port >= 1 && port <= 65_535))
        throw new ConfigError(name, `"${seed}" is not a host:port seed node in ${value}`);
      return { host: match[1].replace(/^\[|\]$/g, ""), port };
    });
  return { kind: "redis-cluster", nodes, password: password === "" ? undefined : password };
}

const MAX_WORKERS = 64;

/** A count from 1 to 64, or "auto": one per core Node may use (capped at 64). */
function workerCount(env: Environment, name: string): number {
  const value = raw(env, name);
  if (value === "auto") return Math.min(availableParallelism(), MAX_WORKERS);
  if (value !== undefined && !/^\d+$/.test(value))
    throw new ConfigError(name, `expected a number from 1 to ${MAX_WORKERS} or "auto", got "${value}"`);
  return integer(env, name, 1, 1, MAX_WORKERS);
}

const MAX_PROBE_THREADS = 64;

/**
 * 0 to 64, or "auto" (the default): the cores left to each serve process
 * once its main thread has one, at least 1. One process on 2 cores: 1 probe
 * thread; on 8 cores: 7; SITEDIAG_WORKERS=auto: 1 per process.
 */
function probeThreadCount(env: Environment, name: string, workers: number): number {
  const value = raw(env, name);
  if (value === undefined || value === "" || value === "auto") {
    return Math.min(MAX_PROBE_THREADS, Math.max(1, Math.floor(availableParallelism() / workers) - 1));
  }
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `expected a number from 0 to ${MAX_PROBE_THREADS} or "auto", got "${value}"`);
  return integer(env, name, 1, 0, MAX_PROBE_THREADS);
}

function logLevel(env: Environment, name: string, fallback: LogLevel): LogLevel {
  const value = text(env, name, fallback);
  const known = LOG_LEVELS.find((level) => level === value);
  if (known === undefined) throw new ConfigError(name, `expected one of ${LOG_LEVELS.join(", ")}, got "${value}"`);
  return known;
}
