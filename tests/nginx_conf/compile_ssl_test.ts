/** TLS in an nginx.conf: listen parameters, certificates and the tuning directives. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { compileText, refusals } from "../engine/_conf.ts";
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { compileHttp } from "../../src/nginx_conf/compile.ts";
import { listenParameter } from "../../src/nginx_conf/values.ts";
import { PLAIN_ON_TLS_PORT } from "../../src/nginx_conf/compile_ssl.ts";
import { groupByListen } from "../../src/engine/mod.ts";

/** The `[warn]` texts of a text that compiles. */
function warnings(http: string, file = "/n/conf/nginx.conf"): string[] {
  const text = `events {}\n${http}`;
  const result = compileHttp(
    parseNginxConf(file, {
      readTextFile: () => text,
      readDirFiles: () => [],
    }),
    { file, prefix: "/n", caseless: false },
  );
  deepStrictEqual(result.errors, []);
  return result.warnings.filter((w) => !w.startsWith('"events"'));
}

const PAIR = "ssl_certificate cert.pem; ssl_certificate_key key.pem;";

Deno.test("listenParameter() takes ssl and http2 as nginx 1.22 does, and still refuses quic", () => {
  const table: [string, ReturnType<typeof listenParameter>][] = [
    ["ssl", "ok"],
    ["http2", "ok"],
    ["default_server", "ok"],
    ["quic", "emerg"],
    ["proxy_protocol", "emerg"],
    ["reuseport", "warn"],
    ["ssl2", "invalid"],
  ];
  for (const [param, verdict] of table) {
    strictEqual(listenParameter(param), verdict, param);
  }
});

Deno.test("compileHttp() gives a listen … ssl server its certificate, inherited from http, relative to the conf folder", () => {
  const conf = compileText(`http {
    ssl_certificate cert.pem;
    ssl_certificate_key /keys/key.pem;
    server { listen 127.0.0.1:80; return 301 https://$host$request_uri; }
    server { listen 127.0.0.1:443 ssl http2; location / { root html; } }
  }`);
  const [plain, tls] = groupByListen(conf.servers, "port");
  deepStrictEqual([plain!.ssl, plain!.certificate], [false, null]);
  deepStrictEqual([tls!.ssl, tls!.http2], [true, true]);
  deepStrictEqual(
    [tls!.certificate?.certificate, tls!.certificate?.certificateKey],
    ["/n/conf/cert.pem", "/keys/key.pem"],
  );
});

Deno.test("compileHttp() keeps a Windows certificate path as written, C:/ and C:\\ alike", () => {
  const text = `events {}\nhttp { server { listen 443 ssl;
    ssl_certificate "C:/nginx/ssl/a.crt"; ssl_certificate_key C:\\\\nginx\\\\ssl\\\\a.key; } }`;
  const file = "C:\\nginx\\conf\\nginx.conf";
  const result = compileHttp(
    parseNginxConf(file, { readTextFile: () => text, readDirFiles: () => [] }),
    { file, prefix: "C:\\nginx", caseless: true },
  );
  deepStrictEqual(result.errors, []);
  const ssl = result.conf!.servers[0]!.ssl!;
  deepStrictEqual([ssl.certificate, ssl.certificateKey], [
    "C:/nginx/ssl/a.crt",
    "C:\\nginx\\ssl\\a.key",
  ]);
});

Deno.test("compileHttp() refuses TLS setups nginx refuses, in nginx's words", () => {
  const table: [string, string[]][] = [
    [
      "server { listen 443 ssl; }",
      [
        'no "ssl_certificate" is defined for the "listen ... ssl" directive in /n/conf/nginx.conf:3',
      ],
    ],
    [
      "server { listen 443 ssl; ssl_certificate a.pem; }",
      ['no "ssl_certificate_key" is defined for certificate "a.pem"'],
    ],
    [
      `server { listen 443 ssl; ${PAIR} ssl_protocols TLSv1.2 TLSv2; }`,
      ['invalid value "TLSv2" in /n/conf/nginx.conf:3'],
    ],
    [
      `server { listen 443 ssl; ${PAIR} ssl_verify_client on; }`,
      [
        '"ssl_verify_client on" is not supported: the gateway behaves as "ssl_verify_client off" in /n/conf/nginx.conf:3',
      ],
    ],
    [
      `server { listen 443 ssl; ${PAIR} ssl_password_file p.txt; }`,
      [
        '"ssl_password_file" is not supported: the gateway reads keys without a pass phrase in /n/conf/nginx.conf:3',
      ],
    ],
    [
      "server { listen 443 ssl; ssl_certificate $ssl_server_name.crt; ssl_certificate_key a.key; }",
      [
        '"ssl_certificate" with variables is not supported: the gateway loads one certificate at start in /n/conf/nginx.conf:3',
      ],
    ],
    [
      `server { listen 443 quic; ${PAIR} }`,
      [
        '"listen … quic" is not supported: the gateway serves HTTP/1.1 and HTTP/2 over TCP in /n/conf/nginx.conf:3',
      ],
    ],
  ];
  for (const [server, expected] of table) {
    deepStrictEqual(refusals(`http {\n${server} }`), expected, server);
  }
});

Deno.test("compileHttp() refuses two certificates on one port: the runtime cannot choose by name (SNI)", () => {
  deepStrictEqual(
    refusals(`http {
    server { listen 443 ssl; server_name a.test; ${PAIR} }
    server { listen 443 ssl; server_name b.test;
      ssl_certificate b.pem; ssl_certificate_key b.key; }
    server { listen 443; server_name c.test; }
  }`),
    [
      '"ssl_certificate" "/n/conf/b.pem" beside "/n/conf/cert.pem" on port 443 is not supported: the gateway serves one certificate per port (no choice by server name, SNI) in /n/conf/nginx.conf:5',
    ],
  );
  // The same pair in every server, or inherited from http, is one certificate.
  compileText(`http { ${PAIR}
    server { listen 443 ssl; server_name a.test; }
    server { listen 443 ssl; server_name b.test; ${PAIR} }
  }`);
});

Deno.test("compileHttp() warns once per directive the runtime decides itself, and not at the runtime's own value", () => {
  deepStrictEqual(
    warnings(`http {
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers HIGH:!aNULL:!MD5;
    ssl_prefer_server_ciphers off;
    server { listen 443 ssl; ${PAIR}
      ssl_protocols TLSv1 TLSv1.1 TLSv1.2;
      ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256;
      ssl_prefer_server_ciphers on;
      ssl_session_cache shared:SSL:10m;
      ssl_session_timeout 10m;
      ssl_dhparam dh.pem;
      ssl_stapling on;
    }
  }`).sort(),
    [
      '"ssl_protocols TLSv1 TLSv1.1 TLSv1.2" is ignored: the runtime (rustls) offers TLSv1.2 and TLSv1.3 in /n/conf/nginx.conf:7',
      '"ssl_ciphers" is ignored: the runtime (rustls) offers its own suites, AES-GCM and ChaCha20-Poly1305 with forward secrecy in /n/conf/nginx.conf:8',
      '"ssl_prefer_server_ciphers on" is ignored: the runtime (rustls) follows the client\'s order of suites in /n/conf/nginx.conf:9',
      '"ssl_session_cache" is ignored: the runtime (rustls) keeps its own TLS session resumption in /n/conf/nginx.conf:10',
      '"ssl_session_timeout" is ignored: the runtime (rustls) keeps its own TLS session resumption in /n/conf/nginx.conf:11',
      '"ssl_dhparam" is ignored: the runtime (rustls) negotiates ECDHE key exchange only, with its own curves in /n/conf/nginx.conf:12',
      '"ssl_stapling" is ignored: the runtime (rustls) staples no OCSP response: browsers ask the CA themselves in /n/conf/nginx.conf:13',
      `"listen … ssl": ${PLAIN_ON_TLS_PORT} in /n/conf/nginx.conf:6`,
    ].sort(),
  );
});

Deno.test("compileHttp() warns at each TLS port that plain HTTP sent there is not nginx's 400", () => {
  deepStrictEqual(
    warnings(`http {
    server { listen 443 ssl; ${PAIR} }
    server { listen 8443 ssl http2; listen 8080; ${PAIR} }
    server { listen 8081; }
  }`),
    [
      `"listen … ssl": ${PLAIN_ON_TLS_PORT} in /n/conf/nginx.conf:3`,
      `"listen … ssl": ${PLAIN_ON_TLS_PORT} in /n/conf/nginx.conf:4`,
    ],
  );
  strictEqual(
    PLAIN_ON_TLS_PORT.includes("The plain HTTP request was sent to HTTPS port"),
    true,
  );
});

Deno.test("compileHttp() takes the deprecated ssl on as listen … ssl, with nginx's warning", () => {
  const text = `http { server { listen 443; ssl on; ${PAIR} } }`;
  deepStrictEqual(warnings(text), [
    'the "ssl" directive is deprecated, use the "listen ... ssl" directive instead in /n/conf/nginx.conf:2',
    `"ssl on": ${PLAIN_ON_TLS_PORT} in /n/conf/nginx.conf:2`,
  ]);
  strictEqual(compileText(text).servers[0]!.listens[0]!.ssl, true);
});
