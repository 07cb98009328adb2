/**
 * Certificates for the TLS tests, made in the test with `openssl` (Debian
 * has it), never checked in: a self-signed one for `localhost` and
 * 127.0.0.1, its key, and a key of another pair.
 */
import { join } from "node:path";

/** A certificate and key written to a folder. */
export interface TestCertificate {
  /** The certificate's path. */
  certPath: string;
  /** The key's path. */
  keyPath: string;
  /** The certificate in PEM, for a client that trusts it. */
  cert: string;
}

/**
 * Makes a self-signed certificate for `localhost` and 127.0.0.1.
 *
 * @param dir Where to write `NAME.crt` and `NAME.key`.
 * @param name The file names' stem.
 * @returns The paths and the certificate.
 */
export async function makeCertificate(
  dir: string,
  name = "station",
): Promise<TestCertificate> {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  const out = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      // webpki refuses a CA certificate as the server's own.
      "-addext",
      "basicConstraints=critical,CA:FALSE",
      "-addext",
      "extendedKeyUsage=serverAuth",
    ],
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  if (!out.success) {
    throw new Error(`openssl failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return { certPath, keyPath, cert: await Deno.readTextFile(certPath) };
}
