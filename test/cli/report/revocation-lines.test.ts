import { describe, expect, it } from "vitest";
import { revocationLines } from "../../../src/cli/report/revocation-lines.js";
import { createPaint } from "../../../src/cli/report/terminal-text.js";
import type { RequestRecord } from "../../../src/diagnostics/diagnostic-details.js";
import { NO_STAPLE, type StapledOcsp } from "../../../src/probe/connect/stapled-ocsp.js";

// The readings a real staple can give but the loopback responder cannot make on demand (a stale one, an unchecked signature).
const paint = createPaint(false);

/** Only `tls.ocsp` is read by the lines. */
function requestWith(ocsp: StapledOcsp | null): RequestRecord {
  return { tls: ocsp === null ? null : { ocsp } } as unknown as RequestRecord;
}

const GOOD: StapledOcsp = Object.assign({}, NO_STAPLE, {
  status: "good" as const,
  producedAt: "2026-11-20T10:00:00.000Z",
  thisUpdate: "2026-11-20T10:00:00.000Z",
  nextUpdate: "2026-11-27T10:00:00.000Z",
  forLeaf: true,
  signature: "verified" as const,
  sizeBytes: 471,
});

describe("revocationLines", () => {
  it("one line per distinct reading, naming its rows; an http request has none", () => {
    const text = revocationLines([requestWith(GOOD), requestWith(null), requestWith(GOOD), requestWith(NO_STAPLE)], "hop", paint);
    expect(text).toBe(
      "  ocsp  good, for this certificate, signature verified, next update 2026-11-27  (hops 1, 3)\n" +
        "  ocsp  nothing stapled (no OCSP responder is asked)  (hop 4)\n",
    );
  });

  it("says stale, an unchecked or failed signature, and an unknown status", () => {
    const stale = Object.assign({}, GOOD, {
      stale: true,
      signature: "unchecked" as const,
      signatureNote: "the chain does not give the leaf's issuer",
    });
    const forged = Object.assign({}, GOOD, {
      status: "unknown" as const,
      signature: "failed" as const,
      signatureNote: "signed neither by the leaf's issuer nor by a responder it certified for OCSP signing",
    });
    expect(revocationLines([requestWith(stale), requestWith(forged)], "request", paint).split("\n")).toEqual([
      "  ocsp  good, for this certificate, signature not checked (the chain does not give the leaf's issuer), stale: next update was 2026-11-27  (request 1)",
      "  ocsp  unknown to its responder, for this certificate, signature fails (signed neither by the leaf's issuer nor by a responder it certified for OCSP signing), next update 2026-11-27  (request 2)",
      "",
    ]);
  });
});
