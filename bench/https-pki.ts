import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The bench's HTTPS leaves: the two key types public sites serve most. */
export type LeafKind = "ecdsa" | "rsa";

/** Files of a test PKI the bench made (PEM paths): the CA and one leaf per kind, each for 127.0.0.1. */
export interface BenchPki {
  readonly caFile: string;
  readonly leaves: Readonly<Record<LeafKind, { readonly keyFile: string; readonly certFile: string }>>;
}

/**
 * A CA (ECDSA P-256) and two leaves it signs for IP 127.0.0.1, an ECDSA
 * P-256 and an RSA-2048 one, made with the openssl CLI in `dir`. Every tool
 * of the bench trusts the CA as a production host trusts a private CA:
 * sitediag through NODE_EXTRA_CA_CERTS (Node's default store plus it),
 * blackbox_exporter through its module's tls_config.ca_file, the node:tls
 * floor through a SecureContext built once.
 */
export async function makeBenchPki(dir: string): Promise<BenchPki> {
  const at = (name: string) => join(dir, name);
  writeFileSync(
    at("leaf.cnf"),
    "[ leaf ]\nbasicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1, DNS:localhost\n",
  );
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  const rsa = ["-newkey", "rsa:2048", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.pem"),
    "-days",
    "30",
    "-subj",
    "/O=sitediag bench/CN=sitediag bench CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const leaf = async (kind: LeafKind, key: readonly string[], serial: string) => {
    await run("openssl", ["req", "-new", ...key, "-keyout", at(`${kind}.key`), "-out", at(`${kind}.csr`), "-subj", "/CN=127.0.0.1"]);
    await run("openssl", [
      "x509",
      "-req",
      "-in",
      at(`${kind}.csr`),
      "-CA",
      at("ca.pem"),
      "-CAkey",
      at("ca.key"),
      "-set_serial",
      serial,
      "-days",
      "30",
      "-extfile",
      at("leaf.cnf"),
      "-extensions",
      "leaf",
      "-out",
      at(`${kind}.pem`),
    ]);
    return { keyFile: at(`${kind}.key`), certFile: at(`${kind}.pem`) };
  };
  return { caFile: at("ca.pem"), leaves: { ecdsa: await leaf("ecdsa", ec, "0x1001"), rsa: await leaf("rsa", rsa, "0x1002") } };
}
