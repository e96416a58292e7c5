import type { JsonObject } from "./json-value.js";

/**
 * Example 200 bodies per REST tool, shown under `examples` of the success
 * response: the contract's plain answer, and the same operation asked for
 * `details=true`. Documentation addresses only (RFC 5737, example.com). A
 * test validates every example against the schema it is shown with.
 */
export const SUCCESS_EXAMPLES: Readonly<Record<string, Readonly<Record<string, { readonly summary: string; readonly value: JsonObject }>>>> = {
  "is-site-down": {
    up: {
      summary: "Up, after one redirect",
      value: {
        ok: true,
        data: {
          requestedUrl: "https://example.com/start",
          finalUrl: "https://example.com/home",
          status: "up",
          statusCode: 200,
          statusText: "OK",
          responseTime: 87,
          reason: null,
          failedStage: null,
          redirectHops: [{ url: "https://example.com/start", status: 301 }],
          proxyBlocked: false,
        },
        meta: { tool: "is-site-down", version: "v1" },
      },
    },
    detailsExpiredCertificate: {
      summary: "details=true: down on an expired certificate, shown although it failed verification",
      value: {
        ok: true,
        data: {
          requestedUrl: "https://old.example.com/",
          finalUrl: null,
          status: "down",
          statusCode: null,
          statusText: null,
          responseTime: null,
          reason: "TLS certificate has expired",
          failedStage: "tls",
          redirectHops: null,
          proxyBlocked: false,
          details: {
            code: "tls_certificate_expired",
            requests: [
              {
                url: "https://old.example.com/",
                method: "GET",
                headFallback: false,
                remoteAddress: "192.0.2.20",
                ipFamily: 4,
                httpVersion: null,
                status: null,
                timings: { dnsMs: 1.3, connectMs: 0.7, tlsMs: 21.7, firstByteMs: null, totalMs: 38.9 },
                tls: {
                  protocol: "TLSv1.3",
                  cipher: "TLS_AES_256_GCM_SHA384",
                  alpn: "http/1.1",
                  certificate: {
                    subject: "old.example.com",
                    issuer: "R11, Let's Encrypt",
                    subjectAltNames: ["DNS:old.example.com"],
                    validFrom: "2024-01-01T00:00:00.000Z",
                    validTo: "2024-03-31T00:00:00.000Z",
                    daysRemaining: -604,
                    serialNumber: "04A1B2C3D4E5F60718293A4B5C6D7E8F9012",
                    fingerprintSha256: "3F:9A:51:0C:7E:22:B4:91:D8:6A:0F:33:C1:5E:77:08:AB:19:E4:62:5D:C0:38:7B:F1:04:9E:2A:66:D3:81:C2",
                    chainLength: 2,
                  },
                  verifyError: "CERT_HAS_EXPIRED",
                },
                failure: { stage: "tls", code: "tls_certificate_expired", reason: "TLS certificate has expired", timedOut: false, elapsedMs: 38.9 },
              },
            ],
            proxy: null,
            clientRedirect: null,
          },
        },
        meta: { tool: "is-site-down", version: "v1" },
      },
    },
    detailsChallenge: {
      summary: "details=true: up, but a Cloudflare challenge answered (403 with cf-mitigated: challenge)",
      value: {
        ok: true,
        data: {
          requestedUrl: "http://example.com/",
          finalUrl: "http://example.com/",
          status: "up",
          statusCode: 403,
          statusText: "Forbidden",
          responseTime: 54,
          reason: null,
          failedStage: null,
          redirectHops: null,
          proxyBlocked: true,
          details: {
            code: null,
            requests: [
              {
                url: "http://example.com/",
                method: "GET",
                headFallback: false,
                remoteAddress: "2001:db8::30",
                ipFamily: 6,
                httpVersion: "1.1",
                status: 403,
                timings: { dnsMs: 1.0, connectMs: 9.1, tlsMs: null, firstByteMs: 31.2, totalMs: 52.8 },
                tls: null,
                failure: null,
              },
            ],
            proxy: { provider: "cloudflare", kind: "challenge" },
            clientRedirect: null,
          },
        },
        meta: { tool: "is-site-down", version: "v1" },
      },
    },
  },
  "redirect-check": {
    redirects: {
      summary: "Redirects detected",
      value: {
        ok: true,
        data: {
          input: "http://example.com",
          redirects: 1,
          finalUrl: "https://example.com/",
          finalStatus: 200,
          totalTimeMs: 61,
          chainStatus: "Redirects detected",
          chain: [
            {
              hop: 1,
              url: "http://example.com/",
              hostname: "example.com",
              status: 301,
              statusText: "Moved Permanently",
              location: "https://example.com/",
              redirectType: "301 Moved Permanently",
              responseTimeMs: 14,
              upgradedToHttps: true,
            },
            {
              hop: 2,
              url: "https://example.com/",
              hostname: "example.com",
              status: 200,
              statusText: "OK",
              location: null,
              redirectType: null,
              responseTimeMs: 41,
              upgradedToHttps: false,
            },
          ],
          warnings: [],
        },
        meta: { tool: "redirect-check", version: "v1" },
      },
    },
    detailsMetaRefresh: {
      summary: "details=true: the final page redirects by a meta refresh, reported and not followed",
      value: {
        ok: true,
        data: {
          input: "http://example.com/old",
          redirects: 0,
          finalUrl: "http://example.com/old",
          finalStatus: 200,
          totalTimeMs: 23,
          chainStatus: "Healthy",
          chain: [
            {
              hop: 1,
              url: "http://example.com/old",
              hostname: "example.com",
              status: 200,
              statusText: "OK",
              location: null,
              redirectType: null,
              responseTimeMs: 11,
              upgradedToHttps: false,
            },
          ],
          warnings: [
            {
              code: "client_side_redirect_not_followed",
              message: "http://example.com/old redirects by itself (meta refresh, after 0 s) to http://example.com/new; not followed",
              hop: 1,
            },
          ],
          details: {
            code: null,
            requests: [
              {
                url: "http://example.com/old",
                method: "HEAD",
                headFallback: false,
                remoteAddress: "192.0.2.10",
                ipFamily: 4,
                httpVersion: "1.1",
                status: 200,
                timings: { dnsMs: 1.2, connectMs: 0.9, tlsMs: null, firstByteMs: 7.8, totalMs: 10.6 },
                tls: null,
                failure: null,
              },
              {
                url: "http://example.com/old",
                method: "GET",
                headFallback: false,
                remoteAddress: "192.0.2.10",
                ipFamily: 4,
                httpVersion: "1.1",
                status: 200,
                timings: { dnsMs: 1.1, connectMs: 0.8, tlsMs: null, firstByteMs: 8.4, totalMs: 11.2 },
                tls: null,
                failure: null,
              },
            ],
            proxy: null,
            clientRedirect: { kind: "meta_refresh", url: "http://example.com/new", delaySeconds: 0 },
          },
        },
        meta: { tool: "redirect-check", version: "v1" },
      },
    },
  },
};
