/**
 * Directives that matter only beside one the gateway refuses (the uwsgi
 * and SCGI modules' settings, `proxy_ssl_*`): accepted with one warning
 * each, as nginx accepts them, wherever nginx's tables allow; their `*_pass`
 * stays refused. The FastCGI module's: mapped where the FastCGI handler
 * reads them, the rest warned about or taken at their default as the table
 * says. `chunked_transfer_encoding` too: the runtime decides the framing.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { DIRECTIVES } from "../../src/nginx_conf/directives.ts";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTest, station } from "./_station.ts";
import { fileWith, messages } from "./_messages.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/** The names of the class, by their prefixes. */
const NAMES = [...DIRECTIVES.keys()].filter((n) =>
  /^(uwsgi|scgi)_/.test(n) || n.startsWith("proxy_ssl_")
);

Deno.test("--check warns once about each uwsgi, SCGI and proxy_ssl_ setting, at every level nginx allows", () => {
  // Every directive of the two modules (104 in nginx 1.22's tables, their
  // *_pass among them) and the 13 proxy_ssl_ ones.
  strictEqual(NAMES.length, 104 + 13);
  for (const name of NAMES.filter((n) => !n.endsWith("_pass"))) {
    const spec = DIRECTIVES.get(name)![0]!;
    const args = spec.flag ? "on" : Array(spec.min).fill("1").join(" ");
    const only = name.startsWith("proxy_ssl_")
      ? 'it matters only with an "https://" proxy_pass, which the gateway refuses'
      : `it matters only with ${name.split("_")[0]}_pass`;
    for (const level of ["http", "server", "location"] as const) {
      if (!spec.contexts.includes(level)) continue;
      deepStrictEqual(
        messages(fileWith(`${name} ${args};`, level)),
        [`"${name}" is ignored: ${only}`],
        `${name} in ${level}`,
      );
    }
  }
});

Deno.test("--check refuses uwsgi_pass and scgi_pass, and takes fastcgi_pass", () => {
  for (const name of ["uwsgi_pass", "scgi_pass"]) {
    deepStrictEqual(
      messages(fileWith(`${name} 127.0.0.1:9000;`, "location")),
      [
        `"${name}" is not supported: the gateway forwards over HTTP and FastCGI only`,
      ],
    );
  }
  deepStrictEqual(
    messages(fileWith("fastcgi_pass 127.0.0.1:9000;", "location")),
    [],
  );
});

/** Each FastCGI directive the handler does not read, and what --check says. */
const FASTCGI_NOT_READ: [string, string][] = [
  [
    "fastcgi_buffers 4 64k;",
    '"fastcgi_buffers" is ignored: it only tunes how nginx does its work',
  ],
  [
    "fastcgi_buffering off;",
    '"fastcgi_buffering" is ignored: it only tunes how nginx does its work',
  ],
  [
    "fastcgi_temp_file_write_size 256k;",
    '"fastcgi_temp_file_write_size" is ignored: it only tunes how nginx does its work',
  ],
  [
    "fastcgi_cache_key $uri;",
    '"fastcgi_cache_key" is ignored: it matters only with fastcgi_cache',
  ],
  [
    "fastcgi_keep_conn on;",
    '"fastcgi_keep_conn on" is not supported: the gateway behaves as "fastcgi_keep_conn off"',
  ],
  [
    "fastcgi_cache zone;",
    '"fastcgi_cache zone" is not supported: the gateway behaves as "fastcgi_cache off"',
  ],
  [
    "fastcgi_catch_stderr x;",
    '"fastcgi_catch_stderr" is not supported: the gateway does not reproduce it',
  ],
  [
    "fastcgi_cache_valid 200 1m;",
    '"fastcgi_cache_valid" is not supported: the gateway keeps no response cache',
  ],
];

Deno.test("--check reads the FastCGI module's 49 directives as the table says", () => {
  strictEqual(
    [...DIRECTIVES.keys()].filter((n) => n.startsWith("fastcgi_")).length,
    49,
  );
  for (const [line, said] of FASTCGI_NOT_READ) {
    deepStrictEqual(messages(fileWith(line, "location")), [said], line);
  }
  for (
    const line of [
      "fastcgi_param A $uri if_not_empty;",
      "fastcgi_index index.php;",
      "fastcgi_split_path_info ^(.+\\.php)(/.+)$;",
      "fastcgi_read_timeout 300;",
      "fastcgi_buffer_size 64k;",
      "fastcgi_intercept_errors on;",
      "fastcgi_hide_header X-Powered-By;",
      "fastcgi_pass_header Server;",
      "fastcgi_pass_request_body off;",
      "fastcgi_keep_conn off;",
    ]
  ) {
    deepStrictEqual(messages(fileWith(line, "location")), [], line);
  }
});

/**
 * The settings two real station files carry beside an http:// proxy_pass
 * (a PHP panel's FastCGI tuning at `http`, a .NET site's `proxy_ssl_*` in a
 * location), and one of each other module.
 */
const REAL = [
  "fastcgi_connect_timeout 300;",
  "fastcgi_send_timeout 300;",
  "fastcgi_read_timeout 300;",
  "fastcgi_buffer_size 64k;",
  "fastcgi_buffers 4 64k;",
  "fastcgi_busy_buffers_size 128k;",
  "fastcgi_temp_file_write_size 256k;",
  "fastcgi_intercept_errors on;",
  "uwsgi_read_timeout 60s;",
  "scgi_read_timeout 60s;",
];

Deno.test(
  "nginx -t and --check both accept a station file with these settings and no *_pass",
  ON_LINUX,
  async () => {
    await using s = station(
      "stock",
      (text) =>
        text.replace(/^(\s*http\s*\{)/m, `$1\n${REAL.join("\n")}`)
          .replace(
            "proxy_pass http://127.0.0.1:8080/;",
            "proxy_pass http://127.0.0.1:8080/;\nproxy_ssl_verify off;\nproxy_ssl_server_name on;",
          ),
    );
    const nginx = await nginxTest(s);
    strictEqual(nginx.ok, true, `nginx -t: ${nginx.emerg}`);
    const result = loadNginxConf(s.conf);
    strictEqual(result.ok ? "ok" : result.message, "ok");
  },
);

Deno.test("--check says of resolver what a proxy_pass with variables in its host then reaches", () => {
  deepStrictEqual(messages(fileWith("resolver 127.0.0.1;", "http")), [
    '"resolver" is ignored: the gateway resolves no names per request: a proxy_pass with variables in its host reaches upstream{} names and addresses only',
  ]);
});

Deno.test("--check accepts chunked_transfer_encoding on and off with one warning, at every level", () => {
  // An event stream's location often says `off`; the runtime frames a body
  // of unknown length as chunked either way (README, chunked-off).
  for (const value of ["on", "off"]) {
    for (const level of ["http", "server", "location"] as const) {
      deepStrictEqual(
        messages(fileWith(`chunked_transfer_encoding ${value};`, level)),
        [
          '"chunked_transfer_encoding" is ignored: the runtime chunks a body of unknown length for HTTP/1.1 clients',
        ],
        `${value} in ${level}`,
      );
    }
  }
});

Deno.test("--check accepts a refused module's switch at nginx's off, the default, and refuses on, at every level", () => {
  // `override_charset off;` changes nothing in nginx: a file that says so
  // runs; `on` would need what the gateway does not do.
  for (const name of ["override_charset"]) {
    for (const level of ["http", "server", "location"] as const) {
      deepStrictEqual(
        [
          messages(fileWith(`${name} off;`, level)),
          messages(fileWith(`${name} on;`, level)),
        ],
        [[], [
          `"${name} on" is not supported: the gateway behaves as "${name} off"`,
        ]],
        `${name} in ${level}`,
      );
    }
  }
});

Deno.test("--check accepts ssi and its settings at every level nginx allows, ssi_min_file_chunk with one warning", () => {
  for (const level of ["http", "server", "location"] as const) {
    deepStrictEqual(
      messages(fileWith(
        "ssi on; ssi_types text/plain; ssi_silent_errors on; " +
          "ssi_last_modified on; ssi_value_length 1k; ssi_min_file_chunk 2k;",
        level,
      )),
      [
        '"ssi_min_file_chunk" is ignored: it only tunes how nginx does its work',
      ],
      level,
    );
    deepStrictEqual(
      messages(fileWith("ssi off; ssi_value_length many;", level)),
      ['"ssi_value_length" directive invalid value'],
      level,
    );
  }
});
