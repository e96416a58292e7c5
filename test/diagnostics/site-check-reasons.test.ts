import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  NO_ADDRESS_REASON,
  REDIRECT_DEFECT_REASONS,
  REDIRECT_REFUSAL_REASONS,
  failureReason,
  formatDuration,
  redirectRefusalReason,
  serverErrorReason,
  tooManyRedirectsReason,
} from "../../src/diagnostics/site-check-result.js";
import { CAUSES, STAGE_FALLBACKS, type FailureStage } from "../../src/shared/failures.js";
import { describeFailure, type ProbeFailure } from "../../src/probe/failure.js";

/** A failure as the probe reports it for this code met in this phase (or cut short there). */
function failure(phase: FailureStage, code: string, aborted = false): ProbeFailure {
  // Cut short by the check's own timeout (6 s in these cases), it had all of it.
  return describeFailure({ phase, code, aborted, elapsedMs: aborted ? 6_000 : 1, remoteAddress: null });
}

describe("site check reasons", () => {
  it("writes the contract's examples", () => {
    expect(serverErrorReason(503, "Service Unavailable")).toBe("Server returned 503 Service Unavailable");
    expect(failureReason(failure("dns", "ENOTFOUND"), 6_000)).toBe("DNS lookup failed: no such host");
    expect(failureReason(failure("connect", "ECONNREFUSED"), 6_000)).toBe("Connection refused");
    expect(failureReason(failure("tls", "CERT_HAS_EXPIRED"), 6_000)).toBe("TLS certificate has expired");
    expect(failureReason(failure("http", "RESPONSE_HEAD_TIMEOUT", true), 6_000)).toBe("Timed out after 6 s waiting for a response");
    expect(tooManyRedirectsReason(5)).toBe("Too many redirects: still redirecting after 5 requests");
    expect(redirectRefusalReason("non_public_address")).toBe("Redirect to a non-public address was refused");
  });

  it("says which stage a timeout cut short", () => {
    expect(failureReason(failure("dns", "ETIMEOUT", true), 6_000)).toBe("Timed out after 6 s resolving the host name");
    expect(failureReason(failure("connect", "CONNECT_TIMEOUT", true), 6_000)).toBe("Timed out after 6 s connecting to the server");
    expect(failureReason(failure("tls", "ERR_TLS_HANDSHAKE_TIMEOUT", true), 6_000)).toBe("Timed out after 6 s during the TLS handshake");
  });

  it("a timeout that came before the time allowed says the time it had, never the allowance (the resolver's own limit)", () => {
    const early: ProbeFailure = Object.assign({}, failure("dns", "ETIMEOUT"), { elapsedMs: 5_031 });
    expect(failureReason(early, 6_000)).toBe("Timed out after 5 s resolving the host name (the resolver gave up before the 6 s allowed)");
    const ours: ProbeFailure = Object.assign({}, failure("dns", "ETIMEOUT", true), { elapsedMs: 6_004 });
    expect(failureReason(ours, 6_000)).toBe("Timed out after 6 s resolving the host name");
  });

  it("shows the probe's own sentence for every failure but a timeout", () => {
    const own: ProbeFailure = {
      stage: "connect",
      cause: "EWHATEVER",
      timedOut: false,
      reason: "the probe's sentence",
      elapsedMs: 1,
      remoteAddress: null,
    };
    expect(failureReason(own, 6_000)).toBe("the probe's sentence");
    expect(failureReason({ ...own, timedOut: true, elapsedMs: 6_000 }, 6_000)).toBe("Timed out after 6 s connecting to the server");
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
    expect(redirectRefusalReason("no_address")).toBe("DNS lookup failed: the name has no address");
  });
});

/** The first backticked text of each bullet in a Markdown section, from its heading to the next heading of any level. */
function listedReasons(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const body = markdown.slice(start + heading.length).split(/\n#{2,3} /)[0] ?? "";
  return [...body.matchAll(/^- `([^`]+)`/gm)].map((match) => match[1] ?? "");
}

describe("the documented list of reasons", () => {
  const docs = listedReasons(readFileSync(new URL("../../docs/is-site-down.md", import.meta.url), "utf8"), "## Every `reason` text");
  const readme = listedReasons(
    readFileSync(new URL("../../README.md", import.meta.url), "utf8"),
    "### Every `reason` text of is-site-down",
  );

  it("names every sentence the probe can give a failure that did not time out, and no other", () => {
    const probeSentences = new Set([
      ...Object.values(CAUSES)
        .filter((info) => info.stage !== "input" && info.timedOut !== true && info.wordedBy === undefined)
        .map((info) => info.reason),
      ...Object.values(STAGE_FALLBACKS),
    ]);
    const ownSentence = /^(Server returned |Too many redirects|Redirect |Timed out after N s )/;
    for (const sentence of probeSentences) expect(docs).toContain(sentence);
    for (const sentence of docs.filter((text) => !ownSentence.test(text))) expect(probeSentences).toContain(sentence);
  });

  it("names every sentence of is-site-down's own", () => {
    const own = [
      ...Object.values(REDIRECT_REFUSAL_REASONS),
      ...Object.values(REDIRECT_DEFECT_REASONS),
      NO_ADDRESS_REASON,
      tooManyRedirectsReason(5),
    ];
    for (const sentence of own) expect(docs).toContain(sentence);
  });

  it("is the same in the README", () => {
    expect(readme).toEqual(docs);
  });
});
