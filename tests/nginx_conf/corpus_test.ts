/**
 * The corpus of station files beside real nginx 1.22 (`nginx -t`): the same
 * verdict on syntax, nginx's own message for each error, and the gateway's
 * own refusal where nginx would do what the gateway does not reproduce.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTest, station } from "./_station.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/** A case: nginx's verdict, and the gateway's (`ok`, or its refusal). */
const CASES: [
  string,
  { nginx: boolean; gateway: true | RegExp; warnings?: number },
][] = [
  ["stock", { nginx: true, gateway: true, warnings: 4 }],
  ["stock_no_api", { nginx: true, gateway: true, warnings: 4 }],
  ["upstream_backup", { nginx: true, gateway: true, warnings: 4 }],
  ["timeouts_body", { nginx: true, gateway: true, warnings: 2 }],
  ["includes", { nginx: true, gateway: true, warnings: 2 }],
  ["quoting", { nginx: true, gateway: true, warnings: 1 }],
  ["warn_only", { nginx: true, gateway: true, warnings: 9 }],
  ["proxy_pass_no_uri", { nginx: true, gateway: true, warnings: 4 }],
  ["rewrite", { nginx: true, gateway: true, warnings: 4 }],
  ["emerg_auth", { nginx: true, gateway: true, warnings: 4 }],
  ["two_servers", { nginx: true, gateway: true, warnings: 1 }],
  ["regex_location", { nginx: true, gateway: true, warnings: 4 }],
  ["syntax_brace", {
    nginx: false,
    gateway: /^unexpected "\}" in .*nginx.conf:50$/,
  }],
  ["syntax_quote", {
    nginx: false,
    gateway: /^unexpected end of file, expecting ";" or "\}"/,
  }],
  ["syntax_extra_brace", {
    nginx: false,
    gateway: /^unexpected "\}" in .*:7$/,
  }],
  ["unknown_directive", {
    nginx: false,
    gateway: /^unknown directive "proxy_pas"/,
  }],
  ["include_missing", {
    nginx: false,
    gateway:
      /^open\(\) ".*station.conf" failed \(2: No such file or directory\)/,
  }],
  ["not_allowed_here", {
    nginx: false,
    gateway: /^"listen" directive is not allowed here/,
  }],
];

for (const [name, expected] of CASES) {
  Deno.test(
    `corpus ${name}: nginx -t and the gateway agree`,
    ON_LINUX,
    async () => {
      await using s = station(name);
      const nginx = await nginxTest(s);
      strictEqual(nginx.ok, expected.nginx, `nginx -t: ${nginx.emerg}`);
      const result = loadNginxConf(s.conf);
      if (expected.gateway === true) {
        strictEqual(result.ok ? "ok" : result.message, "ok");
        strictEqual(
          result.warnings.length,
          expected.warnings,
          result.warnings.join("\n"),
        );
        return;
      }
      strictEqual(result.ok, false);
      if (!result.ok) {
        match(result.message, expected.gateway);
        // A file nginx refuses is refused in nginx's words.
        if (!nginx.ok) strictEqual(result.message, nginx.emerg);
      }
    },
  );
}

/** Syntax errors in small files: nginx's message, word for word. */
const SNIPPETS = [
  'events {}\nhttp { server { server_name "a"b; } }',
  "events {}\nhttp { server { server_name a; ; } }",
  "events {}\nhttp {\n server {\n",
  "events {}\nhttp { server; }",
  "events {}\nhttp { server { listen 80 { } } }",
  "events {}\nhttp { root; }",
  "events {}\nhttp { sendfile yes; }",
  "events {}\nhttp { root a;\n root b; }",
  "events {}\nhttp { types { text/html html; x { } } }",
  "events {}\nhttp { include a b; }",
  "events {}\nhttp { server { location / { root 'html } } }",
  "events {}\n{",
  "events {}\nhttp { server { server_name a\\\n; } }\n}",
  // A missing ";" after listen: the next line's words become parameters.
  "events {}\nhttp {\n server {\n  listen 80\n  server_name station;\n }\n}",
  "events {}\nhttp { server { listen 127.0.0.1:8081 default_server\n root html; } }",
];

for (const text of SNIPPETS) {
  Deno.test(
    `nginx -t and the gateway give one message for ${JSON.stringify(text)}`,
    ON_LINUX,
    async () => {
      await using s = station("stock", () => text);
      const nginx = await nginxTest(s);
      const result = loadNginxConf(s.conf);
      deepStrictEqual(
        { ok: result.ok, message: result.ok ? null : result.message },
        { ok: false, message: nginx.emerg },
      );
    },
  );
}

Deno.test(
  "nginx -t on a station passes as a user who may not write /run or /var/log",
  { ignore: Deno.build.os !== "linux" || Deno.uid() !== 0 },
  async () => {
    // Debian's nginx -t creates /run/nginx.pid and opens
    // /var/log/nginx/access.log unless told otherwise (tests/_nginx.ts
    // nginxArgs(), _station.ts debianCopy()); a non-root run of the suite
    // passes only if neither is needed. 65534 is nobody.
    await using s = station("stock");
    const nginx = await nginxTest(s, { uid: 65534 });
    strictEqual(nginx.ok, true, `nginx -t: ${nginx.emerg}`);
  },
);
