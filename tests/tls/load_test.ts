/** Loading a certificate and key: nginx's `[emerg]` wording for each failure. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  keyKind,
  loadCertificatePair,
  type PairIo,
} from "../../src/tls/mod.ts";
import { makeCertificate } from "../_tls.ts";

const CERT = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";

/** Files in memory; the runtime's verdict given. */
function io(
  files: Record<string, string | Error>,
  probe: Error | null = null,
): PairIo {
  return {
    read(path) {
      const file = files[path];
      if (file === undefined) {
        throw new Deno.errors.NotFound(
          `No such file or directory (os error 2): open '${path}'`,
        );
      }
      if (file instanceof Error) throw file;
      return file;
    },
    probe: () => probe,
  };
}

const paths = { certificate: "/c/a.crt", certificateKey: "/c/a.key" };

Deno.test("loadCertificatePair() words each failure as nginx 1.22 with OpenSSL 3.0", () => {
  const table: [string, PairIo, string][] = [
    [
      "no certificate file",
      io({ "/c/a.key": KEY }),
      'cannot load certificate "/c/a.crt": BIO_new_file() failed (SSL: error:80000002:system library::No such file or directory:calling fopen(/c/a.crt, r) error:10000080:BIO routines::no such file)',
    ],
    [
      "a certificate that is no PEM",
      io({ "/c/a.crt": "junk\n", "/c/a.key": KEY }),
      'cannot load certificate "/c/a.crt": PEM_read_bio_X509_AUX() failed (SSL: error:0480006C:PEM routines::no start line:Expecting: TRUSTED CERTIFICATE)',
    ],
    [
      "a key given as the certificate",
      io({ "/c/a.crt": KEY, "/c/a.key": KEY }),
      'cannot load certificate "/c/a.crt": PEM_read_bio_X509_AUX() failed (SSL: error:0480006C:PEM routines::no start line:Expecting: TRUSTED CERTIFICATE)',
    ],
    [
      "no key file",
      io({ "/c/a.crt": CERT }),
      'cannot load certificate key "/c/a.key": BIO_new_file() failed (SSL: error:80000002:system library::No such file or directory:calling fopen(/c/a.key, r) error:10000080:BIO routines::no such file)',
    ],
    [
      "a key file that cannot be read",
      io({
        "/c/a.crt": CERT,
        "/c/a.key": new Deno.errors.PermissionDenied(
          "Permission denied (os error 13)",
        ),
      }),
      'cannot load certificate key "/c/a.key": BIO_new_file() failed (SSL: error:8000000D:system library::Permission denied:calling fopen(/c/a.key, r) error:10080002:BIO routines::system lib)',
    ],
    [
      "the certificate given as the key",
      io({ "/c/a.crt": CERT, "/c/a.key": CERT }),
      'cannot load certificate key "/c/a.key": PEM_read_bio_PrivateKey() failed (SSL: error:1E08010C:DECODER routines::unsupported:No supported data to decode. Input type: PEM)',
    ],
    [
      "a key behind a pass phrase",
      io({
        "/c/a.crt": CERT,
        "/c/a.key": KEY.replaceAll("PRIVATE", "ENCRYPTED PRIVATE"),
      }),
      'cannot load certificate key "/c/a.key": PEM_read_bio_PrivateKey() failed (the key is encrypted: the gateway reads keys without a pass phrase)',
    ],
    [
      "a key of another pair",
      io(
        { "/c/a.crt": CERT, "/c/a.key": KEY },
        new Error("keys may not be consistent: KeyMismatch"),
      ),
      'SSL_CTX_use_PrivateKey("/c/a.key") failed (SSL: error:05800074:x509 certificate routines::key values mismatch)',
    ],
    [
      "a certificate the runtime cannot decode",
      io(
        { "/c/a.crt": CERT, "/c/a.key": KEY },
        new Error("Unable to decode certificate"),
      ),
      'cannot load certificate "/c/a.crt": PEM_read_bio_X509_AUX() failed (Unable to decode certificate)',
    ],
  ];
  for (const [name, files, message] of table) {
    deepStrictEqual(
      loadCertificatePair(paths, files),
      { ok: false, message },
      name,
    );
  }
});

Deno.test("keyKind() tells a usable key from an encrypted one and from none", () => {
  const table: [string, ReturnType<typeof keyKind>][] = [
    [KEY, "key"],
    [KEY.replaceAll("PRIVATE", "RSA PRIVATE"), "key"],
    [KEY.replaceAll("PRIVATE", "EC PRIVATE"), "key"],
    [KEY.replaceAll("PRIVATE", "ENCRYPTED PRIVATE"), "encrypted-key"],
    [
      "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAA\n-----END RSA PRIVATE KEY-----\n",
      "encrypted-key",
    ],
    [CERT, "none"],
    ["", "none"],
  ];
  for (const [text, kind] of table) strictEqual(keyKind(text), kind, text);
});

Deno.test("loadCertificatePair() takes a real pair and refuses the key of another, by the runtime's check", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tls-load-" });
  try {
    const a = await makeCertificate(dir, "a");
    const b = await makeCertificate(dir, "b");
    const good = loadCertificatePair({
      certificate: a.certPath,
      certificateKey: a.keyPath,
    });
    strictEqual(good.ok && good.pem.cert, a.cert);
    deepStrictEqual(
      loadCertificatePair({
        certificate: a.certPath,
        certificateKey: b.keyPath,
      }),
      {
        ok: false,
        message: `SSL_CTX_use_PrivateKey("${
          join(dir, "b.key")
        }") failed (SSL: error:05800074:x509 certificate routines::key values mismatch)`,
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
