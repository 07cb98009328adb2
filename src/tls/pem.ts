/**
 * What a PEM file holds, read as OpenSSL's `PEM_read_bio_*` would start
 * to: the labels of its `-----BEGIN …-----` lines. The runtime (rustls)
 * decodes the blocks themselves; this only tells a file that is no PEM at
 * all from one it could not use, so each gets nginx's wording.
 *
 * @module
 */

/** The labels OpenSSL reads a certificate from (`PEM_read_bio_X509_AUX`). */
const CERTIFICATE_LABELS = [
  "CERTIFICATE",
  "TRUSTED CERTIFICATE",
  "X509 CERTIFICATE",
];

/** The private key labels the runtime can use. */
const KEY_LABELS = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"];

/** What kind of PEM a file is, as far as its labels tell. */
export type PemKind = "certificate" | "key" | "encrypted-key" | "none";

/**
 * The `BEGIN` labels of a PEM text, in order.
 *
 * @param text The file's text.
 * @returns The labels, e.g. `["CERTIFICATE", "CERTIFICATE"]` for a chain.
 *
 * @example Usage
 * ```ts
 * import { pemLabels } from "./pem.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(pemLabels("-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"), ["PRIVATE KEY"]);
 * ```
 */
export function pemLabels(text: string): string[] {
  return [...text.matchAll(/^-----BEGIN ([A-Z0-9 ]{1,64})-----\r?$/gm)].map(
    (m) => m[1]!,
  );
}

/**
 * Whether a text holds a certificate nginx's OpenSSL would start reading.
 *
 * @param text The file's text.
 * @returns `true` when a certificate block is present.
 */
export function hasCertificate(text: string): boolean {
  return pemLabels(text).some((l) => CERTIFICATE_LABELS.includes(l));
}

/**
 * The private key a text holds, as far as its label tells.
 *
 * @param text The file's text.
 * @returns `key` for a usable label, `encrypted-key` for a key behind a
 * pass phrase (`ssl_password_file`), `none` otherwise.
 */
export function keyKind(text: string): Exclude<PemKind, "certificate"> {
  const labels = pemLabels(text);
  // A traditional key behind a pass phrase keeps its label and says so in
  // a `Proc-Type` header (RFC 1421).
  if (
    labels.includes("ENCRYPTED PRIVATE KEY") ||
    /^Proc-Type: *4, *ENCRYPTED\r?$/m.test(text)
  ) {
    return "encrypted-key";
  }
  return labels.some((l) => KEY_LABELS.includes(l)) ? "key" : "none";
}
