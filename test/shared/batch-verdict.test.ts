import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  ChainStatus,
  CheckSitesResponseSchema,
  SiteStatus,
  TraceRedirectsBatchResponseSchema,
  WarningSeverity,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import {
  batchCsv,
  checkVerdict,
  failureCountText,
  failureCounts,
  notRunRecord,
  traceRecord,
  traceVerdict,
} from "../../src/shared/batch-verdict.js";

// The one rule the CLI's table, the page's table and both CSVs judge a batch row by.

const trace = (value: Record<string, unknown>, expectation?: { matches: boolean; reason?: string }) =>
  create(TraceRedirectsBatchResponseSchema, {
    index: 0,
    url: "http://a.test/old",
    outcome: { case: "result", value },
    ...(expectation === undefined ? {} : { expectation }),
  });

describe("the batch verdict", () => {
  it("passes a chain that ends below 400, with no expectation or one met", () => {
    expect(traceVerdict(trace({ finalStatus: 200, chainStatus: ChainStatus.REDIRECTS_DETECTED }))).toEqual({
      verdict: "PASS",
      code: "",
      reason: "",
    });
    expect(traceVerdict(trace({ finalStatus: 200, chainStatus: ChainStatus.HEALTHY }, { matches: true }))).toEqual({
      verdict: "PASS",
      code: "",
      reason: "ends at the expected final URL",
    });
  });

  it("fails a final 4xx/5xx with no expectation, as the page always did", () => {
    const item = trace({
      finalStatus: 503,
      chainStatus: ChainStatus.HEALTHY,
      chain: [{ hop: 1, status: 503, statusText: "Service Unavailable" }],
    });
    expect(traceVerdict(item)).toEqual({
      verdict: "FAIL",
      code: "final_status_error",
      reason: "the final URL answers 503 Service Unavailable",
    });
  });

  it("fails a chain that ends well but has a problem warning (an https -> http downgrade), as a single trace's exit status does", () => {
    const downgrade = {
      code: "https_downgrade",
      message: "Hop 1 redirects from HTTPS to plain HTTP",
      hop: 1,
      severity: WarningSeverity.PROBLEM,
    };
    const temporary = { code: "temporary_redirect", message: "Hop 1 is a temporary redirect", hop: 1, severity: WarningSeverity.WARNING };
    expect(
      traceVerdict(trace({ finalStatus: 200, chainStatus: ChainStatus.REDIRECTS_DETECTED, warnings: [temporary, downgrade] })),
    ).toEqual({
      verdict: "FAIL",
      code: "https_downgrade",
      reason: "Hop 1 redirects from HTTPS to plain HTTP",
    });
    expect(traceVerdict(trace({ finalStatus: 200, chainStatus: ChainStatus.REDIRECTS_DETECTED, warnings: [temporary] }))).toMatchObject({
      verdict: "PASS",
    });
  });

  it("names a broken chain by its stop warning, before an expectation that could only repeat it", () => {
    const item = trace(
      { chainStatus: ChainStatus.REDIRECT_LOOP, warnings: [{ code: "redirect_loop", message: "Hop 2 redirects back to hop 1" }] },
      { matches: false, reason: "the chain did not end" },
    );
    expect(traceVerdict(item)).toEqual({ verdict: "FAIL", code: "redirect_loop", reason: "redirect loop: Hop 2 redirects back to hop 1" });
  });

  it("fails an expectation not met, and an item with no result by its error code", () => {
    expect(
      traceVerdict(
        trace(
          { finalStatus: 200, chainStatus: ChainStatus.REDIRECTS_DETECTED },
          { matches: false, reason: "hop 1 is a temporary redirect" },
        ),
      ),
    ).toMatchObject({
      code: "expectation_not_met",
      reason: "expectation not met: hop 1 is a temporary redirect",
    });
    const refused = create(TraceRedirectsBatchResponseSchema, {
      index: 3,
      url: "ftp://x",
      outcome: { case: "error", value: { code: "invalid_argument", message: "only http and https" } },
    });
    expect(traceVerdict(refused)).toEqual({ verdict: "FAIL", code: "invalid_argument", reason: "not traced: only http and https" });
    // A refusal of the URL itself carries its input_* code, as a single call's 400 names it (issue 39: it said invalid_argument).
    const privateAddress = create(TraceRedirectsBatchResponseSchema, {
      index: 4,
      url: "http://10.0.0.1/old",
      outcome: {
        case: "error",
        value: { code: "invalid_argument", message: "Target 10.0.0.1 is not a public address", refusalCode: "input_non_public_address" },
      },
    });
    expect(traceVerdict(privateAddress)).toMatchObject({ verdict: "FAIL", code: "input_non_public_address" });
    const unchecked = create(CheckSitesResponseSchema, {
      outcome: {
        case: "error",
        value: { code: "invalid_argument", message: "The URL could not be parsed", refusalCode: "input_invalid_url" },
      },
    });
    expect(checkVerdict(unchecked)).toMatchObject({ verdict: "FAIL", code: "input_invalid_url" });
  });

  it("fails a chain longer than its max_redirects as chain_too_long, after a broken chain and before an expectation", () => {
    const hops = [301, 301, 301, 200].map((status, i) => ({ hop: i + 1, url: `http://a.test/${i}`, status }));
    const long = { finalUrl: "http://a.test/3", finalStatus: 200, redirects: 3, chainStatus: ChainStatus.REDIRECTS_DETECTED, chain: hops };
    const held = (maxRedirects: number | undefined) =>
      create(TraceRedirectsBatchResponseSchema, {
        index: 0,
        url: "http://a.test/0",
        outcome: { case: "result", value: long },
        expectation: { matches: true },
        maxRedirects,
      });
    expect(traceVerdict(held(2))).toEqual({ verdict: "FAIL", code: "chain_too_long", reason: "3 redirects, more than the 2 allowed" });
    expect(traceVerdict(held(3)).verdict).toBe("PASS");
    expect(traceVerdict(held(undefined)).verdict).toBe("PASS");
    const loop = create(TraceRedirectsBatchResponseSchema, {
      outcome: {
        case: "result",
        value: { ...long, chainStatus: ChainStatus.REDIRECT_LOOP, warnings: [{ code: "redirect_loop", message: "back to hop 1" }] },
      },
      maxRedirects: 0,
    });
    expect(traceVerdict(loop).code).toBe("redirect_loop");
  });

  it("counts the failures of each code, most first, leaving out what passed and what did not run", () => {
    const rows = [
      { verdict: "FAIL", code: "final_status_error" },
      { verdict: "PASS", code: "" },
      { verdict: "FAIL", code: "expectation_not_met" },
      { verdict: "FAIL", code: "final_status_error" },
      { verdict: "NOT RUN", code: "not_run" },
      { verdict: "FAIL", code: "chain_too_long" },
    ] as const;
    expect(failureCounts(rows)).toEqual([
      { code: "final_status_error", count: 2 },
      { code: "chain_too_long", count: 1 },
      { code: "expectation_not_met", count: 1 },
    ]);
    expect(failureCountText(rows)).toBe("2 final_status_error, 1 chain_too_long, 1 expectation_not_met");
    expect(failureCountText([{ verdict: "PASS", code: "" }])).toBe("");
  });

  it("fails a down check by its failure code, and an up one answering 4xx", () => {
    const down = create(CheckSitesResponseSchema, {
      outcome: { case: "result", value: { status: SiteStatus.DOWN, reason: "Connection refused", details: { code: "connect_refused" } } },
    });
    expect(checkVerdict(down)).toEqual({ verdict: "FAIL", code: "connect_refused", reason: "down: Connection refused" });
    const notFound = create(CheckSitesResponseSchema, {
      outcome: { case: "result", value: { status: SiteStatus.UP, statusCode: 404, statusText: "Not Found" } },
    });
    expect(checkVerdict(notFound)).toMatchObject({ verdict: "FAIL", code: "final_status_error" });
  });

  it("fails an up check whose evidence has a problem warning (a revoked certificate), as `sitediag check`'s exit status does", () => {
    const revoked = {
      code: "certificate_revoked",
      message: "The certificate of https://a.test/ is revoked",
      hop: 1,
      severity: WarningSeverity.PROBLEM,
    };
    const expiring = {
      code: "certificate_expires_soon",
      message: "The certificate expires in 5 days",
      hop: 1,
      severity: WarningSeverity.WARNING,
    };
    const up = (warnings: (typeof revoked)[]) =>
      create(CheckSitesResponseSchema, {
        outcome: { case: "result", value: { status: SiteStatus.UP, statusCode: 200, statusText: "OK", details: { warnings } } },
      });
    expect(checkVerdict(up([expiring, revoked]))).toEqual({
      verdict: "FAIL",
      code: "certificate_revoked",
      reason: "The certificate of https://a.test/ is revoked",
    });
    expect(checkVerdict(up([expiring]))).toEqual({ verdict: "PASS", code: "", reason: "" });
  });

  it("counts every address's and the TLS versions' warnings by their severity: none is a problem, so an up check with them passes", () => {
    const warnings = [
      {
        code: "address_unreachable",
        message: "GET http://a.test/ failed at 1 of 3 addresses: 192.0.2.3 (Connection refused)",
        hop: 1,
        severity: WarningSeverity.WARNING,
      },
      {
        code: "addresses_disagree",
        message: "GET http://a.test/ answers 200 at 192.0.2.1, 503 at 192.0.2.4",
        hop: 1,
        severity: WarningSeverity.WARNING,
      },
      { code: "tls13_not_supported", message: "a.test (192.0.2.1) refused a TLS 1.3 handshake", hop: 1, severity: WarningSeverity.INFO },
      {
        code: "legacy_tls_accepted",
        message: "a.test (192.0.2.1) still completes a handshake over TLS 1.0",
        hop: 1,
        severity: WarningSeverity.WARNING,
      },
    ];
    const up = create(CheckSitesResponseSchema, {
      outcome: { case: "result", value: { status: SiteStatus.UP, statusCode: 200, statusText: "OK", details: { warnings } } },
    });
    expect(checkVerdict(up)).toEqual({ verdict: "PASS", code: "", reason: "" });
    expect(traceVerdict(trace({ finalStatus: 200, chainStatus: ChainStatus.HEALTHY, warnings }))).toMatchObject({ verdict: "PASS" });
  });

  it("judges issue 40's evidence by its severity: a domain on hold or expired fails a row, one expiring soon passes; a DNSSEC-bogus down check fails by its code", () => {
    const held = {
      code: "domain_on_hold",
      message: "The domain a.test is on hold (server hold): its registry keeps it out of DNS",
      severity: WarningSeverity.PROBLEM,
    };
    const expired = {
      code: "domain_expired",
      message: "The registration of a.test expired on 2020-01-01",
      severity: WarningSeverity.PROBLEM,
    };
    const soon = {
      code: "domain_expires_soon",
      message: "The registration of a.test expires on 2026-12-09, in 10 days",
      severity: WarningSeverity.WARNING,
    };
    const up = (warnings: (typeof soon)[]) =>
      create(CheckSitesResponseSchema, {
        outcome: { case: "result", value: { status: SiteStatus.UP, statusCode: 200, statusText: "OK", details: { warnings } } },
      });
    expect(checkVerdict(up([soon]))).toEqual({ verdict: "PASS", code: "", reason: "" });
    expect(checkVerdict(up([soon, held]))).toEqual({ verdict: "FAIL", code: "domain_on_hold", reason: held.message });
    expect(traceVerdict(trace({ finalStatus: 200, chainStatus: ChainStatus.HEALTHY, warnings: [soon, expired] }))).toEqual({
      verdict: "FAIL",
      code: "domain_expired",
      reason: expired.message,
    });
    expect(traceVerdict(trace({ finalStatus: 200, chainStatus: ChainStatus.HEALTHY, warnings: [soon] }))).toMatchObject({
      verdict: "PASS",
    });
    const bogus = create(CheckSitesResponseSchema, {
      outcome: {
        case: "result",
        value: {
          status: SiteStatus.DOWN,
          reason: "DNS lookup failed: DNSSEC validation failed (the answer is bogus)",
          details: { code: "dns_dnssec_bogus" },
        },
      },
    });
    expect(checkVerdict(bogus)).toMatchObject({ verdict: "FAIL", code: "dns_dnssec_bogus" });
  });

  it("writes one CSV for every report, a formula made inert", () => {
    const record = traceRecord(
      trace({
        finalUrl: "http://a.test/new",
        finalStatus: 200,
        chainStatus: ChainStatus.REDIRECTS_DETECTED,
        chain: [
          { hop: 1, url: "http://a.test/old", status: 301 },
          { hop: 2, url: "http://a.test/new", status: 200 },
        ],
      }),
      undefined,
    );
    // index counts from 1, as the table's # does (issue 39: the CSV counted from 0).
    expect(batchCsv([record, notRunRecord(1, "=cmd()", undefined, "stopped before it ran", 3)]).split("\r\n")).toEqual([
      "index,url,expected_final_url,max_redirects,verdict,code,reason,final_status,final_url,hops,chain",
      "1,http://a.test/old,,,PASS,,,200,http://a.test/new,2,301 http://a.test/old > 200 http://a.test/new",
      "2,'=cmd(),,3,NOT RUN,not_run,stopped before it ran,,,,",
      "",
    ]);
  });
});
