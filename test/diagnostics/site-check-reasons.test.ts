import { describe, expect, it } from "vitest";
import {
  failureReason,
  formatDuration,
  redirectRefusalReason,
  serverErrorReason,
  tooManyRedirectsReason,
} from "../../src/diagnostics/site-check-reasons.js";
import type { FailureStage, ProbeFailure } from "../../src/probe/failure.js";

function failure(stage: FailureStage, cause: string, timedOut = false): ProbeFailure {
  return { stage, cause, timedOut, reason: "prober's own sentence", elapsedMs: 1, remoteAddress: null };
}

describe("site check reasons", () => {
  it("writes the contract's examples", () => {
    expect(serverErrorReason(503, "Service Unavailable")).toBe("Server returned 503 Service Unavailable");
    expect(failureReason(failure("dns", "ENOTFOUND"), 6_000)).toBe("DNS lookup failed: no such host");
    expect(failureReason(failure("connect", "ECONNREFUSED"), 6_000)).toBe("Connection refused");
    expect(failureReason(failure("tls", "CERT_HAS_EXPIRED"), 6_000)).toBe("TLS certificate has expired");
    expect(failureReason(failure("http", "UND_ERR_HEADERS_TIMEOUT", true), 6_000)).toBe("Timed out after 6 s waiting for a response");
    expect(tooManyRedirectsReason(5)).toBe("Too many redirects: still redirecting after 5 requests");
    expect(redirectRefusalReason("non_public_address")).toBe("Redirect to a non-public address was refused");
  });

  it("says which stage a timeout cut short", () => {
    expect(failureReason(failure("dns", "ETIMEOUT", true), 6_000)).toBe("Timed out after 6 s resolving the host name");
    expect(failureReason(failure("connect", "UND_ERR_CONNECT_TIMEOUT", true), 6_000)).toBe("Timed out after 6 s connecting to the server");
    expect(failureReason(failure("tls", "ERR_TLS_HANDSHAKE_TIMEOUT", true), 6_000)).toBe("Timed out after 6 s during the TLS handshake");
  });

  it("reads the same code by its stage", () => {
    expect(failureReason(failure("dns", "ECONNREFUSED"), 6_000)).toBe("DNS lookup failed: the name server could not be reached");
    expect(failureReason(failure("http", "ECONNRESET"), 6_000)).toBe("The server closed the connection without a response");
    expect(failureReason(failure("tls", "ECONNRESET"), 6_000)).toBe("TLS handshake failed: the connection was reset");
  });

  it("covers every malformed-response code with one sentence, and unknown codes by stage", () => {
    expect(failureReason(failure("http", "HPE_INVALID_CONSTANT"), 6_000)).toBe("The server sent an invalid HTTP response");
    expect(failureReason(failure("http", "HPE_INVALID_STATUS"), 6_000)).toBe("The server sent an invalid HTTP response");
    expect(failureReason(failure("tls", "ERR_SSL_SOMETHING_NEW"), 6_000)).toBe("TLS handshake failed");
    expect(failureReason(failure("connect", "EWHATEVER"), 6_000)).toBe("Connection failed");
    expect(failureReason(failure("dns", "EWHATEVER"), 6_000)).toBe("DNS lookup failed");
    expect(failureReason(failure("http", "UNKNOWN"), 6_000)).toBe("The HTTP request failed");
  });

  it("formats timeouts as people write them", () => {
    expect(formatDuration(6_000)).toBe("6 s");
    expect(formatDuration(1_500)).toBe("1.5 s");
    expect(formatDuration(400)).toBe("400 ms");
  });

  it("treats a name without addresses as a DNS failure, not a refusal", () => {
    expect(redirectRefusalReason("no_address")).toMatch(/^DNS lookup failed/);
  });
});
