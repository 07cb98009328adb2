/** An nginx.conf onto the gateway's settings, with nginx's semantics. */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { resolveConfig } from "../../src/config/config.ts";
import {
  loadNginxConf,
  type NginxConfResult,
  type NginxSettings,
} from "../../src/nginx_conf/mod.ts";
import { prefixed } from "../../src/nginx_conf/sink.ts";
import { resolve } from "node:path";
import { memoryIo } from "./_memory_io.ts";

const MAIN = "/n/conf/nginx.conf";
/** A path as the reader reports it: on Windows "/n/x" is on the current drive. */
const abs = (path: string) => resolve(path);

/** A file with one server; `api` and `server` are spliced in. */
function conf(parts: { http?: string; server?: string; api?: string }): string {
  return `events {}\nhttp {\n${
    parts.http ?? ""
  }\n server {\n listen 80;\n server_name st;\n${
    parts.server ?? ""
  }\n location /api/ {\n${
    parts.api ?? "proxy_pass http://10.0.0.5:8080/;"
  }\n }\n }\n}\n`;
}

function load(
  text: string,
  extra: Record<string, string> = {},
): NginxConfResult {
  return loadNginxConf(MAIN, memoryIo({ [MAIN]: text, ...extra }));
}

function settings(text: string): NginxSettings {
  const result = load(text);
  if (!result.ok) throw new Error(result.message);
  return result.settings;
}

function refused(text: string): string {
  const result = load(text);
  return result.ok ? "accepted" : result.message;
}

function warnings(text: string): string[] {
  return load(text).warnings;
}

Deno.test("loadNginxConf() maps a minimal station file with nginx's defaults", () => {
  deepStrictEqual(settings(conf({})), {
    listen: "*:80",
    serverName: "st",
    root: abs("/n/html"),
    spaFallback: "off",
    upstream: "http://10.0.0.5:8080",
    upstreamKeepalive: 0,
    errorLog: abs("/n/logs/error.log"),
    accessLog: abs("/n/logs/access.log"),
    // No error_page: nginx's own pages, not the gateway's stock 50x.html.
    errorPage: "off",
  });
});

Deno.test("loadNginxConf() follows proxy_pass's URI rule", () => {
  strictEqual(
    settings(conf({ api: "proxy_pass http://h/;" })).upstream,
    "http://h:80",
  );
  // Without a URI part the path goes upstream as it came, prefix and all.
  const kept = settings(conf({ api: "proxy_pass http://h:8080;" }));
  deepStrictEqual([kept.upstream, kept.keepApiPrefix, kept.apiPrefix], [
    "http://h:8080",
    true,
    undefined,
  ]);
  strictEqual(
    settings(conf({ api: "proxy_pass http://h:8080/api/;" })).keepApiPrefix,
    true,
  );
  strictEqual(
    refused(conf({ api: "proxy_pass http://h:8080/v1/;" })),
    `"proxy_pass http://h:8080/v1/" is not supported: the gateway replaces "/api/" with "/" or forwards it unchanged in ${
      abs(MAIN)
    }:9`,
  );
  match(refused(conf({ api: "proxy_pass https://h/;" })), /http:\/\/ only/);
  match(
    refused(conf({ api: "proxy_pass http://$h/;" })),
    /does not evaluate variables/,
  );
  // Another prefix works the same way.
  const app = settings(
    conf({ server: "location /app/ { proxy_pass http://h/; }" }).replace(
      "location /api/ {\nproxy_pass http://10.0.0.5:8080/;\n }",
      "",
    ),
  );
  deepStrictEqual([app.apiPrefix, app.keepApiPrefix], ["/app/", undefined]);
  match(
    refused(
      conf({ server: "location /a/b/ { proxy_pass http://h/; }" }).replace(
        "location /api/ {\nproxy_pass http://10.0.0.5:8080/;\n }",
        "",
      ),
    ),
    /"location \/a\/b\/" with "proxy_pass" is not supported: the gateway forwards one prefix of one segment/,
  );
  match(
    refused(conf({ server: "location /img/ { root x; }" })),
    /"location \/img\/" is not supported/,
  );
  match(
    refused(conf({ server: "location ~ \\.php$ { }" })),
    /"location ~ \\.php\$" is not supported/,
  );
  match(
    refused(conf({ server: "location @x { }" })),
    /"location @x" is not supported/,
  );
});

Deno.test("loadNginxConf() maps listen as nginx binds it", () => {
  const listen = (server: string) =>
    settings(conf({}).replace("listen 80;", server)).listen;
  strictEqual(listen("listen 8081;"), "*:8081");
  strictEqual(listen("listen 127.0.0.1:8081;"), "127.0.0.1:8081");
  strictEqual(listen("listen 127.0.0.1;"), "127.0.0.1:80");
  strictEqual(listen("listen 80 default_server;"), "*:80");
  strictEqual(listen(""), "*:80");
  strictEqual(listen("listen 80; listen [::]:80;"), "*:80");
  match(
    warnings(conf({}).replace("listen 80;", "listen 80; listen [::]:80;"))
      .join(),
    /"listen \[::\]:80" is ignored/,
  );
  match(
    refused(conf({}).replace("listen 80;", "listen 80; listen 8080;")),
    /a second "listen" address/,
  );
  match(
    refused(conf({}).replace("listen 80;", "listen 443 ssl;")),
    /"listen … ssl" is not supported/,
  );
});

Deno.test("loadNginxConf() maps the static location", () => {
  const s = settings(conf({
    http: "root /srv/www;",
    server:
      "location / { try_files $uri $uri/ /index.html; log_not_found off; index index.html; }",
  }));
  deepStrictEqual([s.root, s.spaFallback, s.logNotFound], [
    "/srv/www",
    "on",
    "off",
  ]);
  strictEqual(settings(conf({ server: "root html;" })).root, abs("/n/html"));
  // A server-level try_files serves only what no location matches.
  strictEqual(
    settings(
      conf({ server: "try_files $uri $uri/ /index.html; location / { }" }),
    )
      .spaFallback,
    "off",
  );
  strictEqual(
    settings(conf({ server: "try_files $uri $uri/ /index.html;" })).spaFallback,
    "on",
  );
  match(
    refused(conf({ server: "try_files $uri =404;" })),
    /"try_files \$uri =404" is not supported/,
  );
  match(
    refused(conf({ server: "index index.php;" })),
    /"index index.php" is not supported/,
  );
  match(
    refused(conf({ http: "default_type text/plain;" })),
    /"default_type text\/plain" is not supported/,
  );
  match(refused(conf({ server: "root $x;" })), /does not evaluate variables/);
});

Deno.test("loadNginxConf() maps an upstream group", () => {
  const http = `upstream app {
    server 10.0.0.5:8080 max_fails=3 fail_timeout=1m;
    server 10.0.0.6 backup;
    keepalive 8;
  }`;
  const s = settings(conf({
    http,
    api:
      'proxy_pass http://app/; proxy_http_version 1.1; proxy_set_header Connection "";',
  }));
  deepStrictEqual([s.upstream, s.upstreamGroup, s.upstreamKeepalive], [
    [
      "http://10.0.0.5:8080 max_fails=3 fail_timeout=60000ms",
      "http://10.0.0.6:80 backup",
    ],
    "app",
    8,
  ]);
  const noReuse = load(conf({ http, api: "proxy_pass http://app/;" }));
  strictEqual(noReuse.ok && noReuse.settings.upstreamKeepalive, 0);
  match(
    noReuse.warnings.join("\n"),
    /"keepalive" is ignored: nginx keeps no upstream connection/,
  );
  match(
    refused(
      conf({
        http: "upstream app { server a weight=2; server b; }",
        api: "proxy_pass http://app/;",
      }),
    ),
    /weight=/,
  );
  match(
    refused(
      conf({
        http: "upstream app { server a down; }",
        api: "proxy_pass http://app/;",
      }),
    ),
    /down/,
  );
  match(
    refused(
      conf({
        http: "upstream app { least_conn; server a; }",
        api: "proxy_pass http://app/;",
      }),
    ),
    /"least_conn" is not supported/,
  );
});

Deno.test("loadNginxConf() maps timers, body size and headers", () => {
  const s = settings(conf({
    http: "proxy_read_timeout 2m; client_max_body_size 20M;",
    api:
      "proxy_pass http://h:1/; proxy_connect_timeout 500ms; proxy_send_timeout 90;" +
      "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
  }));
  deepStrictEqual(
    [
      s.proxyReadTimeout,
      s.proxyConnectTimeout,
      s.proxySendTimeout,
      s.clientMaxBodySize,
      s.addForwardedHeaders,
    ],
    ["120000ms", "500ms", "90000ms", "20m", true],
  );
  match(
    refused(
      conf({ api: "proxy_pass http://h/; proxy_set_header Host $host;" }),
    ),
    /"proxy_set_header Host \$host" is not supported/,
  );
  match(
    refused(
      conf({
        api: "proxy_pass http://h/; proxy_set_header X-Real-IP $remote_addr;",
      }),
    ),
    /X-Real-IP/,
  );
  match(
    refused(conf({ api: "proxy_pass http://h/; proxy_redirect off;" })),
    /"proxy_redirect off" is not supported/,
  );
  match(
    refused(conf({ http: "client_max_body_size 1x;" })),
    /"client_max_body_size" directive invalid value/,
  );
  match(
    refused(conf({ http: "proxy_intercept_errors on;" })),
    /behaves as "proxy_intercept_errors off"/,
  );
  strictEqual(
    refused(conf({ http: "proxy_intercept_errors off;" })),
    "accepted",
  );
});

Deno.test("loadNginxConf() maps the logs, one of each", () => {
  const s = settings(
    `error_log logs/e.log info;\n${
      conf({ http: "access_log /var/log/a.log combined;" })
    }`,
  );
  deepStrictEqual([s.errorLog, s.errorLogLevel, s.accessLog], [
    abs("/n/logs/e.log"),
    "info",
    "/var/log/a.log",
  ]);
  strictEqual(settings(conf({ server: "access_log off;" })).accessLog, "off");
  match(
    refused(conf({ http: "access_log logs/a.log main;" })),
    /"combined" format/,
  );
  match(refused(`error_log stderr;\n${conf({})}`), /writes a file/);
  match(
    refused(conf({ api: "proxy_pass http://h/; access_log logs/api.log;" })),
    /a different "access_log" for \/ and \/api\//,
  );
  match(
    refused(conf({ http: "access_log a.log; access_log b.log;" })),
    /a second "access_log"/,
  );
});

Deno.test("loadNginxConf() maps error_page and its location", () => {
  const page = "error_page 500 502 503 504 /50x.html;";
  deepStrictEqual(
    settings(
      conf({
        server:
          `${page}\nerror_page 404 /404.html;\nlocation = /50x.html { root html; internal; }`,
      }),
    ).errorPage,
    ["500 502 503 504 /50x.html", "404 /404.html"],
  );
  match(
    refused(conf({ server: `${page} location = /50x.html { root other; }` })),
    /with another root/,
  );
  match(
    refused(conf({ server: "location = /x { }" })),
    /only for an "error_page"/,
  );
  match(
    refused(conf({ server: "error_page 404 =200 /x;" })),
    /"error_page … =200" is not supported/,
  );
  match(
    refused(conf({ server: "error_page 200 /x;" })),
    /value "200" must be between 300 and 599/,
  );
});

Deno.test("loadNginxConf() refuses what changes responses and warns about the rest", () => {
  for (
    const [http, message] of [
      [
        "gzip on;",
        /"gzip" is ignored: the gateway passes upstream bytes through/,
      ],
      ["sendfile on;", /"sendfile" is ignored/],
      ["keepalive_timeout 65;", /"keepalive_timeout" is ignored/],
      [
        "types { text/html html; text/plain js; }",
        /"types" is ignored: .* differs for 1 extension: js \(text\/plain\)/,
      ],
    ] as const
  ) {
    match(warnings(conf({ http })).join("\n"), message);
  }
  for (
    const [server, message] of [
      ["rewrite ^ /x;", /"rewrite" is not supported/],
      ["return 404;", /"return" is not supported/],
      ["if ($a) { }", /"if" is not supported/],
      ["auth_basic x;", /"auth_basic" is not supported/],
      ["add_header X y;", /"add_header" is not supported/],
      ["keepalive_timeout 0;", /"keepalive_timeout 0" is not supported/],
    ] as const
  ) {
    match(refused(conf({ server })), message);
  }
  match(
    refused(
      conf({ server: "gzip on;" }).replace(
        "}\n}\n",
        "}\n server { listen 81; }\n}\n",
      ),
    ),
    /a second "server" block/,
  );
  match(refused("events {}"), /no "http" block/);
});

Deno.test("loadNginxConf() settings resolve into a gateway configuration", () => {
  const s = settings(conf({ http: "proxy_read_timeout 1m30s;" }));
  const config = resolveConfig(s, { listen: "127.0.0.1:9000" }, "/elsewhere");
  deepStrictEqual(
    [
      config.listen,
      config.root,
      config.timeouts.readMs,
      config.upstreams[0]!.address.peer,
      config.spaFallback,
    ],
    [
      { hostname: "127.0.0.1", port: 9000 },
      abs("/n/html"),
      90_000,
      "10.0.0.5:8080",
      false,
    ],
  );
});

Deno.test("loadNginxConf() reports a missing main file as nginx does", () => {
  const result = loadNginxConf("/n/conf/none.conf", memoryIo({}));
  strictEqual(
    !result.ok && result.message,
    Deno.build.os === "windows"
      ? `CreateFile() "${
        abs("/n/conf/none.conf")
      }" failed (2: The system cannot find the file specified)`
      : 'open() "/n/conf/none.conf" failed (2: No such file or directory)',
  );
});

Deno.test("prefixed() resolves paths against a Windows prefix as nginx for Windows does", () => {
  const cases: [string, string, string][] = [
    ["C:\\nginx", "html", "C:\\nginx\\html"],
    ["C:\\nginx", "logs/error.log", "C:\\nginx\\logs\\error.log"],
    ["C:\\nginx", "D:/www", "D:/www"],
    ["C:\\nginx", "D:\\www", "D:\\www"],
    ["C:\\nginx", "/www", "/www"],
    ["/srv/nginx", "html", "/srv/nginx/html"],
    ["/srv/nginx", "/var/www", "/var/www"],
  ];
  for (const [prefix, value, expected] of cases) {
    strictEqual(prefixed(prefix, value), expected);
  }
});

Deno.test("loadNginxConf() refuses times and sizes past nginx's or the gateway's limit as nginx words it", async (t) => {
  // [directive line, the message before " in FILE:LINE"]
  const cases: [string, string][] = [
    [
      "proxy_read_timeout 999999999999999999999d;",
      '"proxy_read_timeout" directive invalid value',
    ],
    [
      "proxy_connect_timeout 106751991168d;",
      '"proxy_connect_timeout" directive invalid value',
    ],
    [
      "proxy_send_timeout 9223372036854775807;",
      '"proxy_send_timeout" directive invalid value',
    ],
    [
      "proxy_read_timeout 30d;",
      '"proxy_read_timeout 30d" is not supported: the gateway takes a time up to 2147483647ms',
    ],
    [
      "client_max_body_size 99999999999999999999;",
      '"client_max_body_size" directive invalid value',
    ],
    [
      "client_max_body_size 9223372036854775807k;",
      '"client_max_body_size" directive invalid value',
    ],
    [
      "client_max_body_size 8796093022208k;",
      '"client_max_body_size 8796093022208k" is not supported: the gateway takes a size up to 9007199254740991 bytes',
    ],
  ];
  for (const [line, message] of cases) {
    await t.step(line, () => {
      const result = load(
        conf({ api: `proxy_pass http://10.0.0.5:8080/;\n${line}` }),
      );
      strictEqual(result.ok, false);
      if (!result.ok) {
        match(
          result.message,
          new RegExp(`^${RegExp.escape(message)} in .*nginx\\.conf:\\d+$`),
        );
      }
    });
  }
});

Deno.test("loadNginxConf() refuses a NUL in a path directive, naming its line", async (t) => {
  const cases: [string, string][] = [
    ['root "/srv/a\0b";', "root"],
    ['error_log "logs/e\0.log";', "error_log"],
    ['access_log "logs/a\0.log";', "access_log"],
  ];
  for (const [line, name] of cases) {
    await t.step(name, () => {
      match(
        refused(conf({ server: line })),
        new RegExp(
          `^"${name} [^"]*" is not supported: a path cannot hold a NUL byte in .*nginx\\.conf:\\d+$`,
        ),
      );
    });
  }
});

Deno.test("loadNginxConf() refuses an upstream number past nginx's ngx_atoi as nginx words it", () => {
  const group = (line: string) =>
    conf({
      http: `upstream backend { server 10.0.0.5:8080 ${line}; }`,
      api: "proxy_pass http://backend/;",
    });
  match(
    refused(group("weight=99999999999999999999")),
    /^invalid parameter "weight=99999999999999999999" in .*nginx\.conf:\d+$/,
  );
  match(
    refused(group("max_fails=99999999999999999999")),
    /^invalid parameter "max_fails=99999999999999999999" in .*nginx\.conf:\d+$/,
  );
  match(
    refused(group("fail_timeout=30d")),
    /^"server … fail_timeout=30d" is not supported: the gateway takes a time up to 2147483647ms in .*nginx\.conf:\d+$/,
  );
});
