import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { checkServerIdentity, connect, createSecureContext, type PeerCertificate, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leafForNameCheck } from "../../../src/probe/connect/name-check-leaf.js";
import { getTestPki, type KeyPair, type TestPki } from "../../fixtures/test-ca.js";

// Node's own host-name check reads the leaf alone (name-check-leaf.ts): the
// same verdict and reason as with the whole chain, and every reader after
// the handshake still gets the whole chain.

let pki: TestPki;
const servers: Server[] = [];

beforeAll(async () => {
  pki = await getTestPki();
});
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
});

async function site(pair: KeyPair, chain = ""): Promise<number> {
  const server = createServer({ key: pair.key, cert: pair.cert + chain }, (_request, response) => response.end("ok"));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

interface Handshake {
  /** What Node's name check was handed. */
  readonly checked: PeerCertificate | null;
  readonly authorized: boolean;
  readonly authorizationError: string | null;
  /** getPeerCertificate(true) once the handshake is over. */
  readonly after: PeerCertificate & { issuerCertificate?: PeerCertificate };
}

function handshake(port: number, ca: string | undefined, leafOnly: boolean): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    let checked: PeerCertificate | null = null;
    const socket: TLSSocket = connect({
      host: "127.0.0.1",
      port,
      servername: "localhost",
      secureContext: createSecureContext(ca === undefined ? {} : { ca }),
      rejectUnauthorized: false,
      checkServerIdentity: (host, cert) => {
        checked = cert;
        return checkServerIdentity(host, cert);
      },
    });
    const nameCheck = leafOnly ? leafForNameCheck(socket) : { done: () => undefined };
    socket.once("secureConnect", () => {
      nameCheck.done();
      const raw: unknown = socket.authorizationError;
      resolve({
        checked,
        authorized: socket.authorized,
        authorizationError: typeof raw === "string" ? raw : raw instanceof Error ? raw.message : null,
        after: socket.getPeerCertificate(true),
      });
      socket.destroy();
    });
    socket.once("error", reject);
  });
}

describe("Node's name check, handed the leaf alone", () => {
  it("reads the same names and reaches the same verdict as with the whole chain; the chain is whole afterwards", async () => {
    const port = await site(pki.viaIntermediate, pki.intermediatePem);
    const leaf = await handshake(port, pki.caPem, true);
    const whole = await handshake(port, pki.caPem, false);
    expect(leaf.authorized).toBe(true);
    expect(whole.authorized).toBe(true);
    // The whole chain, as Node reads it for its own check: the leaf links to its issuer.
    expect(whole.checked).toHaveProperty("issuerCertificate");
    // The leaf alone: no link, the same names.
    expect(leaf.checked).not.toBeNull();
    expect(leaf.checked).not.toHaveProperty("issuerCertificate");
    expect(leaf.checked?.subject).toEqual(whole.checked?.subject);
    expect(leaf.checked?.subjectaltname).toBe(whole.checked?.subjectaltname);
    expect(leaf.after.issuerCertificate?.subject.CN).toBe("sitediag test intermediate");
  });

  it("refuses a certificate for another host with the same reason", async () => {
    const port = await site(pki.wrongHost);
    const leaf = await handshake(port, pki.caPem, true);
    const whole = await handshake(port, pki.caPem, false);
    expect(leaf.authorized).toBe(false);
    expect(leaf.authorizationError).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
    expect(leaf.authorizationError).toBe(whole.authorizationError);
  });

  it("when OpenSSL refused the chain (Node checks no name), the first reader after the handshake gets the whole chain", async () => {
    const port = await site(pki.viaIntermediate, pki.intermediatePem);
    // No CA: the chain ends in an issuer nobody trusts, and Node never calls its name check.
    const leaf = await handshake(port, undefined, true);
    expect(leaf.checked).toBeNull();
    expect(leaf.authorized).toBe(false);
    expect(leaf.after.issuerCertificate?.subject.CN).toBe("sitediag test intermediate");
  });
});
