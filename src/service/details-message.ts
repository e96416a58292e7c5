import { create } from "@bufbuild/protobuf";
import {
  CertificateSchema,
  ChainCertificateSchema,
  ChainVerificationSchema,
  ClientRedirectSchema,
  AddressAttemptSchema,
  AddressListSchema,
  type Details,
  DetailsSchema,
  FamilyComparisonSchema,
  HeaderFieldSchema,
  HstsPolicySchema,
  NameResolutionAnswerSchema,
  ExtendedDnsErrorSchema,
  NameResolutionSchema,
  RegistrationSchema,
  NameResolutionSourceSchema,
  ProxyDetailSchema,
  RequestDetailSchema,
  RequestFailureSchema,
  RequestTimingsSchema,
  StapledOcspSchema,
  TlsDetailSchema,
  TlsVersionAttemptSchema,
  TlsVersionListSchema,
  TraceWarningSchema,
  TransportSecuritySchema,
  WarningSeverity,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticDetails, EvidenceWarning, FamilyComparison, RequestRecord, TlsRecord } from "../diagnostics/diagnostic-details.js";
import { type NameResolution, QUESTION_TYPES } from "../probe/name-resolution.js";
import type { AddressSurvey } from "../diagnostics/address-survey.js";
import type { TlsVersionSurvey } from "../diagnostics/tls-version-survey.js";
import { searchMessage } from "./search-message.js";
import type { Registration } from "../registration/registration-lookup.js";

/** The diagnostics' details as the public `Details` message; nulls become unset fields. */
export function detailsMessage(details: DiagnosticDetails): Details {
  return create(DetailsSchema, {
    code: details.code ?? undefined,
    requests: details.requests.map(requestMessage),
    proxy: details.proxy === null ? undefined : create(ProxyDetailSchema, details.proxy),
    clientRedirect: details.clientRedirect === null ? undefined : create(ClientRedirectSchema, details.clientRedirect),
    families: details.families === null ? undefined : familiesMessage(details.families),
    warnings: details.warnings.map(warningMessage),
    resolutions: details.resolutions.map(nameResolutionMessage),
    addresses: details.addresses === null ? undefined : addressesMessage(details.addresses),
    tlsVersions: details.tlsVersions === null ? undefined : tlsVersionsMessage(details.tlsVersions),
    // A vantage of an older version sends details without search.
    search: details.search === null || details.search === undefined ? undefined : searchMessage(details.search),
    registration:
      details.registration === undefined || details.registration === null ? undefined : registrationMessage(details.registration),
  });
}

function addressesMessage(survey: AddressSurvey) {
  return create(AddressListSchema, {
    untried: survey.untried,
    statusDiffers: survey.statusDiffers,
    certificateDiffers: survey.certificateDiffers,
    attempts: survey.attempts.map((attempt) =>
      create(AddressAttemptSchema, {
        address: attempt.address,
        family: attempt.family,
        outcome: attempt.outcome,
        firstRequest: attempt.firstRequest,
        status: attempt.status ?? undefined,
        failedStage: attempt.failedStage ?? undefined,
        code: attempt.code ?? undefined,
        reason: attempt.reason ?? undefined,
        connectMs: attempt.connectMs ?? undefined,
        tlsMs: attempt.tlsMs ?? undefined,
        firstByteMs: attempt.firstByteMs ?? undefined,
        certificateSha256: attempt.certificateSha256 ?? undefined,
      }),
    ),
  });
}

function tlsVersionsMessage(survey: TlsVersionSurvey) {
  return create(TlsVersionListSchema, {
    address: survey.address,
    refusedCode: survey.refusal?.code,
    refusedReason: survey.refusal?.reason,
    h2: survey.h2,
    attempts: survey.attempts.map((attempt) =>
      create(TlsVersionAttemptSchema, {
        version: attempt.version,
        outcome: attempt.outcome,
        cipher: attempt.cipher ?? undefined,
        alpn: attempt.alpn ?? undefined,
        code: attempt.code ?? undefined,
        cause: attempt.cause ?? undefined,
        reason: attempt.reason ?? undefined,
        tlsMs: attempt.tlsMs ?? undefined,
      }),
    ),
  });
}

function registrationMessage(registration: Registration) {
  if (registration.state === "unknown") {
    return create(RegistrationSchema, {
      domain: registration.domain,
      state: "unknown",
      unknownReason: registration.unknownReason,
      rdapUrl: registration.rdapUrl ?? undefined,
    });
  }
  return create(RegistrationSchema, {
    domain: registration.domain,
    state: "found",
    rdapUrl: registration.rdapUrl,
    registrar: registration.registrar ?? undefined,
    created: registration.created ?? undefined,
    expires: registration.expires ?? undefined,
    status: [...registration.status],
    suspended: registration.suspended,
  });
}

function familiesMessage(families: FamilyComparison) {
  return create(FamilyComparisonSchema, {
    pickedFamily: families.pickedFamily,
    otherFamily: families.otherFamily,
    request: families.request === null ? undefined : requestMessage(families.request),
    refusedCode: families.refusal?.code,
    refusedReason: families.refusal?.reason,
    statusDiffers: families.statusDiffers,
    certificateDiffers: families.certificateDiffers,
  });
}

/** The enum value of each severity, as redirect-check's own warnings are rendered. */
const SEVERITY: Readonly<Record<EvidenceWarning["severity"], WarningSeverity>> = {
  info: WarningSeverity.INFO,
  warning: WarningSeverity.WARNING,
  problem: WarningSeverity.PROBLEM,
};

function warningMessage(warning: EvidenceWarning) {
  return create(TraceWarningSchema, {
    code: warning.code,
    message: warning.message,
    hop: warning.hop ?? undefined,
    severity: SEVERITY[warning.severity],
  });
}

function requestMessage(record: RequestRecord) {
  return create(RequestDetailSchema, {
    url: record.url,
    method: record.method,
    headFallback: record.headFallback,
    remoteAddress: record.remoteAddress ?? undefined,
    ipFamily: record.ipFamily ?? undefined,
    httpVersion: record.httpVersion ?? undefined,
    status: record.status ?? undefined,
    timings: create(RequestTimingsSchema, {
      dnsMs: record.timings.dnsMs ?? undefined,
      connectMs: record.timings.connectMs ?? undefined,
      tlsMs: record.timings.tlsMs ?? undefined,
      firstByteMs: record.timings.firstByteMs ?? undefined,
      waitingMs: record.timings.waitingMs ?? undefined,
      receivingMs: record.timings.receivingMs ?? undefined,
      otherMs: record.timings.otherMs,
      totalMs: record.timings.totalMs,
    }),
    connectionReused: record.connectionReused,
    tls: record.tls === null ? undefined : tlsMessage(record.tls),
    failure: record.failure === null ? undefined : create(RequestFailureSchema, record.failure),
    responseHeaders: (record.responseHead?.fields ?? []).map(([name, value]) => create(HeaderFieldSchema, { name, value })),
    responseHeadersTruncated: record.responseHead?.truncated ?? false,
    transportSecurity:
      record.transportSecurity === null
        ? undefined
        : create(TransportSecuritySchema, {
            hsts: record.transportSecurity.hsts === null ? undefined : create(HstsPolicySchema, record.transportSecurity.hsts),
            hstsInvalid: record.transportSecurity.hstsInvalid,
            h3Advertised: record.transportSecurity.h3Advertised,
          }),
    resolution: record.resolution ?? undefined,
  });
}

function tlsMessage(tls: TlsRecord) {
  return create(TlsDetailSchema, {
    protocol: tls.protocol ?? undefined,
    cipher: tls.cipher ?? undefined,
    alpn: tls.alpn ?? undefined,
    certificate:
      tls.certificate === null
        ? undefined
        : create(
            CertificateSchema,
            // Details read the whole chain (hop.ts: captureHead reads "chain"), so it is counted here; only a hop
            // without details reads its leaf alone, and nothing of that hop's session reaches details.
            Object.assign({}, tls.certificate, {
              subjectAltNames: [...tls.certificate.subjectAltNames],
              chainLength: tls.certificate.chainLength ?? undefined,
            }),
          ),
    verifyError: tls.verifyError ?? undefined,
    ocsp: create(StapledOcspSchema, {
      status: tls.ocsp.status,
      invalidReason: tls.ocsp.invalidReason ?? undefined,
      revokedAt: tls.ocsp.revokedAt ?? undefined,
      revocationReason: tls.ocsp.revocationReason ?? undefined,
      producedAt: tls.ocsp.producedAt ?? undefined,
      thisUpdate: tls.ocsp.thisUpdate ?? undefined,
      nextUpdate: tls.ocsp.nextUpdate ?? undefined,
      forLeaf: tls.ocsp.forLeaf,
      stale: tls.ocsp.stale,
      signature: tls.ocsp.signature,
      signatureNote: tls.ocsp.signatureNote ?? undefined,
      sizeBytes: tls.ocsp.sizeBytes,
    }),
    chain: tls.chain.map((certificate) =>
      create(ChainCertificateSchema, Object.assign({}, certificate, { subjectAltNames: [...certificate.subjectAltNames] })),
    ),
    verification:
      tls.verification === null
        ? undefined
        : create(ChainVerificationSchema, {
            verified: tls.verification.verified,
            failedAt: tls.verification.failedAt ?? undefined,
            reason: tls.verification.reason ?? undefined,
            more: tls.verification.more,
          }),
  });
}

function nameResolutionMessage(resolution: NameResolution) {
  const { source } = resolution;
  return create(NameResolutionSchema, {
    name: resolution.name,
    queryTypes: [...QUESTION_TYPES],
    source: create(
      NameResolutionSourceSchema,
      source.kind === "hosts_file" ? { kind: source.kind, path: source.path } : { kind: source.kind, servers: [...source.servers] },
    ),
    cnameChain: [...resolution.cnameChain],
    cnameChainEnd: resolution.cnameChainEnd,
    answers: resolution.answers.map(({ address, family, ttl }) =>
      create(NameResolutionAnswerSchema, { address, family, ttl: ttl ?? undefined }),
    ),
    answersOmitted: resolution.answersOmitted,
    timeMs: resolution.timeMs,
    code: resolution.code ?? undefined,
    rcode: resolution.rcode ?? undefined,
    dnssec: resolution.dnssec,
    extendedErrors: resolution.extendedErrors.map((error) => create(ExtendedDnsErrorSchema, error)),
  });
}
