/**
 * Certificates for the TLS tests, made in the test with `openssl` (Debian
 * has it), never checked in: a self-signed one for `localhost` and
 * 127.0.0.1 and its key; a prefix with an nginx.conf beside them (the
 * common pair of servers), and a client that trusts the certificate.
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

/**
 * A prefix: `conf/nginx.conf`, the certificate in `conf/`, `html/` (an
 * `index.html` and a `sub/` folder), `logs/`; removed when disposed.
 */
export interface Prefix extends AsyncDisposable {
  dir: string;
  conf: string;
  cert: TestCertificate;
  lines(name: "error.log" | "access.log" | "tls.log"): string[];
}

/** Prefix folders whose `html/` was written ahead, oldest first. */
const ahead: string[] = [];
let removesAhead = false;

/** `html/`: an `index.html` and a `sub/` folder with its own. */
function writeHtml(dir: string): void {
  Deno.mkdirSync(join(dir, "html", "sub"), { recursive: true });
  Deno.writeTextFileSync(join(dir, "html", "index.html"), "the app\n");
  Deno.writeTextFileSync(join(dir, "html", "sub", "index.html"), "sub\n");
}

/**
 * Writes the `html/` of `count` prefixes now, for {@linkcode prefixWith} to
 * take. The gateway serves a file only once the folders on its path have
 * been still for a moment, and Deno reports a folder's change time in
 * whole seconds, which counts as the end of that second
 * (`src/static/settled_proof.ts`): a prefix written just before its first
 * request waited up to a second. Called when a test file loads (in a shard,
 * before any test of the shard runs); the ones no test took are removed
 * when the worker unloads.
 *
 * @param count How many prefixes.
 */
export function prefixesAhead(count: number): void {
  if (!removesAhead) {
    removesAhead = true;
    globalThis.addEventListener("unload", () => {
      for (const dir of ahead.splice(0)) {
        try {
          Deno.removeSync(dir, { recursive: true });
        } catch {
          // Removed already.
        }
      }
    });
  }
  for (let i = 0; i < count; i++) {
    const dir = Deno.makeTempDirSync({ prefix: "tls-" });
    writeHtml(dir);
    ahead.push(dir);
  }
}

/**
 * A prefix with the certificate and `text` as its nginx.conf: one whose
 * `html/` was written ahead ({@linkcode prefixesAhead}), else a new one.
 *
 * @param text The nginx.conf, from the prefix's folder.
 * @returns The prefix; disposing removes it.
 */
export async function prefixWith(
  text: (dir: string) => string,
): Promise<Prefix> {
  let dir = ahead.shift();
  if (dir === undefined) {
    dir = await Deno.makeTempDir({ prefix: "tls-" });
    writeHtml(dir);
  }
  for (const sub of ["conf", "logs"]) {
    await Deno.mkdir(join(dir, sub));
  }
  const cert = await makeCertificate(join(dir, "conf"));
  const conf = join(dir, "conf", "nginx.conf");
  await Deno.writeTextFile(conf, text(dir));
  return {
    dir,
    conf,
    cert,
    lines: (name) => {
      try {
        return Deno.readTextFileSync(join(dir, "logs", name)).split("\n")
          .filter((l) => l !== "");
      } catch {
        return [];
      }
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** The common pair on two free ports (443 stands for the TLS port). */
export function commonPair(
  plain: number,
  tls: number,
): (dir: string) => string {
  return (dir) =>
    `events {}
http {
  error_log ${dir}/logs/error.log;
  access_log ${dir}/logs/access.log;
  log_format tls '$request|$server_protocol|$http2|$https|$ssl_client_verify';
  server {
    listen 127.0.0.1:${plain};
    server_name localhost;
    return 301 https://$host:${tls}$request_uri;
  }
  server {
    listen 127.0.0.1:${tls} ssl http2;
    server_name localhost;
    ssl_certificate station.crt;
    ssl_certificate_key station.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / { root html; }
    location /vars {
      access_log ${dir}/logs/access.log;
      access_log ${dir}/logs/tls.log tls;
      return 200 "$scheme $https $server_port $host $http_host\\n";
    }
  }
}
`;
}

/** What a client that trusts the certificate sees, following redirects. */
export async function follow(
  cert: string,
  url: string,
): Promise<{ status: number; url: string; body: string; redirected: boolean }> {
  using client = Deno.createHttpClient({ caCerts: [cert] });
  const response = await fetch(url, { client });
  return {
    status: response.status,
    url: response.url,
    body: await response.text(),
    redirected: response.redirected,
  };
}
