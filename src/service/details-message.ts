import { create } from "@bufbuild/protobuf";
import {
  CertificateSchema,
  ChainCertificateSchema,
  ChainVerificationSchema,
  ClientRedirectSchema,
  type Details,
  DetailsSchema,
  HeaderFieldSchema,
  HstsPolicySchema,
  ProxyDetailSchema,
  RequestDetailSchema,
  RequestFailureSchema,
  RequestTimingsSchema,
  TlsDetailSchema,
  TransportSecuritySchema,
} from "../../gen/sitediag/v1/diagnostics_pb.js";
import type { DiagnosticDetails, RequestRecord, TlsRecord } from "../diagnostics/diagnostic-details.js";

/** The diagnostics' details as the public `Details` message; nulls become unset fields. */
export function detailsMessage(details: DiagnosticDetails): Details {
  return create(DetailsSchema, {
    code: details.code ?? undefined,
    requests: details.requests.map(requestMessage),
    proxy: details.proxy === null ? undefined : create(ProxyDetailSchema, details.proxy),
    clientRedirect: details.clientRedirect === null ? undefined : create(ClientRedirectSchema, details.clientRedirect),
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
  });
}

function tlsMessage(tls: TlsRecord) {
  return create(TlsDetailSchema, {
    protocol: tls.protocol ?? undefined,
    cipher: tls.cipher ?? undefined,
    alpn: tls.alpn ?? undefined,
    certificate: tls.certificate === null ? undefined : create(CertificateSchema, Object.assign({}, tls.certificate, { subjectAltNames: [...tls.certificate.subjectAltNames] })),
    verifyError: tls.verifyError ?? undefined,
    chain: tls.chain.map((certificate) => create(ChainCertificateSchema, Object.assign({}, certificate, { subjectAltNames: [...certificate.subjectAltNames] }))),
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
