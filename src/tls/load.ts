/**
 * Loading a server's certificate and key as nginx does at start
 * (`ngx_ssl_certificate()`, ngx_event_openssl.c), with its `[emerg]`
 * wording for each failure: the file cannot be opened
 * (`BIO_new_file() failed`), holds no certificate or key
 * (`PEM_read_bio_X509_AUX()` / `PEM_read_bio_PrivateKey() failed`), or the
 * key is not the certificate's (`SSL_CTX_use_PrivateKey("…") failed`). The
 * part in parentheses is OpenSSL 3.0's text where the cause is one the
 * gateway can tell (a missing file, no PEM block, a mismatch); otherwise it
 * is the runtime's own reason.
 *
 * @module
 */

import {
  ConfigFileRefusal,
  osErrorOf,
  readConfigText,
} from "../runtime/mod.ts";
import { hasCertificate, keyKind } from "./pem.ts";

/**
 * The largest certificate or key file read: a chain of a few certificates
 * is a few KiB, so 1 MiB refuses a mistaken path (a log, an image) at once.
 */
export const PEM_MAX_BYTES = 1024 * 1024;

/** A certificate and key in PEM, ready for `Deno.serve`. */
export interface TlsPem {
  /** The certificate chain. */
  cert: string;
  /** The private key. */
  key: string;
}

/** The outcome of loading a pair. */
export type LoadedPair =
  | { ok: true; pem: TlsPem }
  | { ok: false; message: string };

/** File access and the runtime's check, replaceable in tests. */
export interface PairIo {
  /** Reads a file as text (throws the runtime's error). */
  read(path: string): string;
  /**
   * Hands the pair to the runtime's TLS stack and returns its refusal,
   * `null` when it takes the pair.
   */
  probe(pem: TlsPem): Error | null;
}

/**
 * The runtime's own verdict on a pair. rustls checks that the key is the
 * certificate's only when a listener is made, and only a listener can be
 * made without waiting (`Deno.listenTls` is synchronous): one on a free
 * loopback port, closed at once. A failure to bind is no verdict on the
 * pair; the real listener reports it.
 */
function probeListener(pem: TlsPem): Error | null {
  try {
    Deno.listenTls({ hostname: "127.0.0.1", port: 0, ...pem }).close();
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return /key|certificate/i.test(message) ? new Error(message) : null;
  }
}

/** The real files and the runtime's check. */
export const DENO_PAIR_IO: PairIo = {
  read: (path) => readConfigText(path, PEM_MAX_BYTES),
  probe: probeListener,
};

/** OpenSSL 3.0's queue after a failed `BIO_new_file()` (bss_file.c). */
function fopenDetail(path: string, error: unknown): string {
  const os = osErrorOf(error, "linux");
  if (os === undefined) {
    return error instanceof Error ? error.message : String(error);
  }
  const code = (0x80000000 + os.code).toString(16).toUpperCase();
  const bio = os.code === 2
    ? "error:10000080:BIO routines::no such file"
    : "error:10080002:BIO routines::system lib";
  return `SSL: error:${code}:system library::${os.text}:calling fopen(${path}, r) ${bio}`;
}

const NO_CERTIFICATE =
  "SSL: error:0480006C:PEM routines::no start line:Expecting: TRUSTED CERTIFICATE";
const NO_KEY =
  "SSL: error:1E08010C:DECODER routines::unsupported:No supported data to decode. Input type: PEM";
const MISMATCH =
  "SSL: error:05800074:x509 certificate routines::key values mismatch";

/**
 * Reads one file of the pair: its text, or nginx's failure for it (a
 * file that is not a regular file reads as no PEM, as OpenSSL's read of a
 * folder fails).
 */
function readPart(
  path: string,
  what: "certificate" | "certificate key",
  io: PairIo,
): { text: string } | { message: string } {
  const pemCall = what === "certificate"
    ? "PEM_read_bio_X509_AUX()"
    : "PEM_read_bio_PrivateKey()";
  try {
    return { text: io.read(path) };
  } catch (error) {
    if (error instanceof ConfigFileRefusal) {
      const detail = error.message.includes("larger than")
        ? `the file is larger than ${PEM_MAX_BYTES} bytes`
        : what === "certificate"
        ? NO_CERTIFICATE
        : NO_KEY;
      return {
        message: `cannot load ${what} "${path}": ${pemCall} failed (${detail})`,
      };
    }
    return {
      message: `cannot load ${what} "${path}": BIO_new_file() failed (${
        fopenDetail(path, error)
      })`,
    };
  }
}

/**
 * Loads a certificate and its key, checked as nginx checks them at start.
 *
 * @param paths The files, absolute.
 * @param io File access and the runtime's check.
 * @returns The PEM texts, or nginx's `[emerg]` message.
 *
 * @example A missing file
 * ```ts
 * import { loadCertificatePair } from "./load.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const io = {
 *   read: () => { throw new Deno.errors.NotFound("x (os error 2)"); },
 *   probe: () => null,
 * };
 * const loaded = loadCertificatePair({ certificate: "/c.pem", certificateKey: "/k.pem" }, io);
 * strictEqual(loaded.ok ? "" : loaded.message.slice(0, 57), 'cannot load certificate "/c.pem": BIO_new_file() failed (');
 * ```
 */
export function loadCertificatePair(
  paths: { certificate: string; certificateKey: string },
  io: PairIo = DENO_PAIR_IO,
): LoadedPair {
  const { certificate, certificateKey } = paths;
  const cert = readPart(certificate, "certificate", io);
  if ("message" in cert) return { ok: false, message: cert.message };
  if (!hasCertificate(cert.text)) {
    return {
      ok: false,
      message:
        `cannot load certificate "${certificate}": PEM_read_bio_X509_AUX() failed (${NO_CERTIFICATE})`,
    };
  }
  const key = readPart(certificateKey, "certificate key", io);
  if ("message" in key) return { ok: false, message: key.message };
  const kind = keyKind(key.text);
  if (kind !== "key") {
    return {
      ok: false,
      message:
        `cannot load certificate key "${certificateKey}": PEM_read_bio_PrivateKey() failed (${
          kind === "encrypted-key"
            ? "the key is encrypted: the gateway reads keys without a pass phrase"
            : NO_KEY
        })`,
    };
  }
  const pem = { cert: cert.text, key: key.text };
  const refused = io.probe(pem);
  if (refused === null) return { ok: true, pem };
  const reason = refused.message;
  if (/KeyMismatch|consistent/i.test(reason)) {
    return {
      ok: false,
      message:
        `SSL_CTX_use_PrivateKey("${certificateKey}") failed (${MISMATCH})`,
    };
  }
  return {
    ok: false,
    message: /certificate/i.test(reason)
      ? `cannot load certificate "${certificate}": PEM_read_bio_X509_AUX() failed (${reason})`
      : `cannot load certificate key "${certificateKey}": PEM_read_bio_PrivateKey() failed (${reason})`,
  };
}
