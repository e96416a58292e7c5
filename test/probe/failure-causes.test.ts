import { errors } from "undici";
import { describe, expect, it } from "vitest";
import { CAUSES, STAGE_FALLBACKS } from "../../src/shared/failures.js";
import { describeFailure, errorCodeOf, TIMEOUT_CAUSE } from "../../src/probe/failure.js";

const facts = { aborted: false, elapsedMs: 12, remoteAddress: null };

describe("errorCodeOf reads the cause chain, not the message", () => {
  it("prefers the deepest known code", () => {
    const inner = Object.assign(new Error("whatever text"), { code: "ECONNRESET" });
    const outer = Object.assign(new Error("other side closed", { cause: inner }), { code: "CONNECTION_CLOSED" });
    expect(errorCodeOf(outer)).toBe("ECONNRESET");
  });
  it("names a parser error that carries no code", () => {
    expect(errorCodeOf(new errors.HTTPParserError("Response does not match", undefined))).toBe("HTTP_PARSE_ERROR");
  });
  it("finds a code the table names only qualified by a phase", () => {
    const inner = Object.assign(new Error("reset"), { code: "ECONNRESET" });
    expect(errorCodeOf(Object.assign(new Error("wrapper", { cause: inner }), { code: "EWRAPPER" }))).toBe("ECONNRESET");
  });
  it("keeps an unknown code as it is, and says UNKNOWN for no code at all", () => {
    expect(errorCodeOf(Object.assign(new Error("x"), { code: "EWEIRD" }))).toBe("EWEIRD");
    expect(errorCodeOf(new Error("ECONNREFUSED in the text only"))).toBe("UNKNOWN");
  });
});

describe("describeFailure", () => {
  it("a deadline names the phase it cut short", () => {
    for (const phase of ["dns", "connect", "tls", "http"] as const) {
      expect(describeFailure({ ...facts, phase, code: "ABORTED", aborted: true })).toMatchObject({
        stage: phase,
        timedOut: true,
        cause: TIMEOUT_CAUSE[phase],
      });
    }
  });
  it("a code owned by a stage names that stage", () => {
    expect(describeFailure({ ...facts, phase: "http", code: "CERT_HAS_EXPIRED" })).toMatchObject({
      stage: "tls",
      reason: "TLS certificate has expired",
    });
    expect(describeFailure({ ...facts, phase: "dns", code: "ENOTFOUND" })).toMatchObject({
      stage: "dns",
      reason: "DNS lookup failed: no such host",
    });
  });
  it("a reset means what its phase makes it mean", () => {
    expect(describeFailure({ ...facts, phase: "connect", code: "ECONNRESET" })).toMatchObject({
      stage: "connect",
      cause: "ECONNRESET",
      reason: "Connection reset while connecting",
    });
    expect(describeFailure({ ...facts, phase: "tls", code: "ECONNRESET" })).toMatchObject({
      stage: "tls",
      cause: "ECONNRESET",
      reason: "TLS handshake failed: the connection was reset",
    });
    expect(describeFailure({ ...facts, phase: "http", code: "ECONNRESET" })).toMatchObject({
      stage: "http",
      cause: "ECONNRESET",
      reason: "The server closed the connection without a response",
    });
  });
  it("a phase-qualified row wins over the bare code", () => {
    expect(describeFailure({ ...facts, phase: "dns", code: "ECONNREFUSED" })).toMatchObject({
      stage: "dns",
      cause: "ECONNREFUSED",
      reason: "DNS lookup failed: the name server could not be reached",
    });
    expect(describeFailure({ ...facts, phase: "connect", code: "ECONNREFUSED" })).toMatchObject({
      stage: "connect",
      reason: "Connection refused",
    });
    expect(describeFailure({ ...facts, phase: "http", code: "ECONNREFUSED" })).toMatchObject({
      stage: "connect",
      reason: "Connection refused",
    });
  });
  it("every malformed-response code reads as one invalid HTTP response, keeping its own cause", () => {
    for (const code of ["HPE_INVALID_CONSTANT", "HPE_INVALID_STATUS", "HTTP_PARSE_ERROR"]) {
      expect(describeFailure({ ...facts, phase: "http", code })).toMatchObject({
        stage: "http",
        cause: code,
        reason: "The server sent an invalid HTTP response",
      });
    }
  });
  it("an unknown code keeps the phase and a generic reason", () => {
    expect(describeFailure({ ...facts, phase: "tls", code: "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE" })).toMatchObject({
      stage: "tls",
      reason: "TLS handshake failed",
    });
    expect(describeFailure({ ...facts, phase: "connect", code: "EWEIRD" })).toMatchObject({
      stage: "connect",
      reason: "Connection failed",
      cause: "EWEIRD",
    });
    expect(describeFailure({ ...facts, phase: "dns", code: "UNKNOWN" })).toMatchObject({ stage: "dns", reason: "DNS lookup failed" });
    expect(describeFailure({ ...facts, phase: "dns", code: "ECONNRESET" })).toMatchObject({ stage: "dns", reason: "DNS lookup failed" });
    expect(describeFailure({ ...facts, phase: "http", code: "UNKNOWN" })).toMatchObject({
      stage: "http",
      reason: "The HTTP request failed",
    });
    expect(describeFailure({ ...facts, phase: "http", code: "constructor" })).toMatchObject({
      stage: "http",
      reason: "The HTTP request failed",
    });
    expect(STAGE_FALLBACKS).toEqual({
      dns: "DNS lookup failed",
      connect: "Connection failed",
      tls: "TLS handshake failed",
      http: "The HTTP request failed",
    });
  });
  it("names the cause is-site-down's issue examples use", () => {
    expect(describeFailure({ ...facts, phase: "tls", code: "ERR_SSL_WRONG_VERSION_NUMBER" })).toMatchObject({
      stage: "tls",
      reason: "TLS handshake failed: the server did not answer with TLS",
    });
    expect(describeFailure({ ...facts, phase: "connect", code: "REMOTE_ADDRESS_MISMATCH" })).toMatchObject({
      stage: "connect",
      reason: "Connection refused by policy: the peer was not the approved address",
    });
    expect(describeFailure({ ...facts, phase: "dns", code: "EBADNAME" })).toMatchObject({
      stage: "dns",
      reason: "DNS lookup failed: the host name is not valid",
    });
    expect(describeFailure({ ...facts, phase: "http", code: "CONNECTION_CLOSED" })).toMatchObject({
      stage: "http",
      reason: "The server closed the connection without a response",
    });
  });
  it("every timeout cause is in the table and flagged as a timeout", () => {
    for (const cause of Object.values(TIMEOUT_CAUSE)) expect(CAUSES[cause]?.timedOut).toBe(true);
  });
  it("every qualified key names a real stage, and its row that stage", () => {
    for (const [key, info] of Object.entries(CAUSES)) {
      const [qualifier, code] = key.includes(":") ? key.split(":") : [null, key];
      expect(code).toMatch(/^[A-Z][A-Z0-9_]*$/);
      if (qualifier !== null) expect(info.stage).toBe(qualifier);
    }
  });
});
