import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { compileText, refusals, requestVars } from "../engine/_conf.ts";
import { findServer, groupByListen } from "../../src/engine/mod.ts";
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { compileHttp } from "../../src/nginx_conf/compile.ts";
import { messages } from "./_messages.ts";

function headersOf(conf: ReturnType<typeof compileText>, name: string) {
  const server = conf.servers[0]!;
  const loc = server.conf.locations.prefixes.find((l) => l.name === name) ??
    server.conf;
  return loc.proxySetHeaders.map(([n, v]) => `${n}: ${v.text}`);
}

Deno.test("compileHttp() merges proxy_set_header as nginx: a level that sets it replaces the list", () => {
  const conf = compileText(`http {
    proxy_set_header X-Http 1;
    server {
      proxy_set_header X-Server 2;
      location /a/ { proxy_pass http://127.0.0.1:1/; }
      location /b/ { proxy_set_header Host $host; proxy_pass http://127.0.0.1:1/; }
      location /c/ { proxy_set_header X-C ""; proxy_pass http://127.0.0.1:1/; }
    }
  }`);
  deepStrictEqual(headersOf(conf, "/a/"), [
    "X-Server: 2",
    "Host: $proxy_host",
    "Connection: close",
  ]);
  deepStrictEqual(headersOf(conf, "/b/"), [
    "Host: $host",
    "Connection: close",
  ]);
  deepStrictEqual(headersOf(conf, "/c/"), [
    "X-C: ",
    "Host: $proxy_host",
    "Connection: close",
  ]);
});

Deno.test("compileHttp() inherits scalars from the nearest level and keeps nginx's defaults", () => {
  const conf = compileText(`http {
    client_max_body_size 10m;
    server {
      root /srv/app;
      location /a/ { proxy_pass http://127.0.0.1:1/; proxy_read_timeout 5s; }
      location /b/ { root /srv/b; client_max_body_size 0; }
    }
  }`);
  const server = conf.servers[0]!;
  const [a, b] = ["/a/", "/b/"].map((n) =>
    server.conf.locations.prefixes.find((l) => l.name === n)!
  );
  deepStrictEqual(
    [
      a!.clientMaxBodySize,
      a!.proxyTimeouts,
      a!.root.constant,
      a!.proxyHttpVersion,
    ],
    [
      10 * 1024 * 1024,
      { connectMs: 60000, sendMs: 60000, readMs: 5000 },
      "/srv/app",
      "1.0",
    ],
  );
  deepStrictEqual([b!.clientMaxBodySize, b!.root.constant], [0, "/srv/b"]);
  // The server's own level: root relative to the prefix when not absolute.
  strictEqual(
    compileText("http { server { } }").servers[0]!.conf.root.constant,
    "/n/html",
  );
});

Deno.test("compileHttp() drops one trailing slash of a root, not of an alias, as ngx_http_core_root", async (t) => {
  // [as written, the root the paths are made from]
  const table: [string, string][] = [
    ["/srv/www/", "/srv/www"],
    ["/srv/www//", "/srv/www/"],
    ["/srv/www", "/srv/www"],
    ['"/srv/my app/"', "/srv/my app"],
    ["html/", "/n/html"],
    ["/", "/"],
  ];
  for (const [written, root] of table) {
    await t.step(written, () => {
      const conf = compileText(
        `http { server { location / { root ${written}; } } }`,
      );
      const location = conf.servers[0]!.conf.locations.prefixes[0]!;
      strictEqual(location.root.evaluate(requestVars("/")), root);
    });
  }
  await t.step("with a variable", () => {
    const conf = compileText(
      `http { server { location / { root /srv/$arg_d/; } } }`,
    );
    const location = conf.servers[0]!.conf.locations.prefixes[0]!;
    strictEqual(location.root.evaluate(requestVars("/?d=v")), "/srv/v");
  });
  await t.step("an alias keeps its slash", () => {
    const conf = compileText(
      `http { server { location /a/ { alias /srv/a/; } } }`,
    );
    const location = conf.servers[0]!.conf.locations.prefixes[0]!;
    strictEqual(location.alias!.evaluate(requestVars("/a/x")), "/srv/a/");
  });
});

Deno.test("compileHttp() finds an upstream{} by its name in any case, as ngx_http_upstream_add", async (t) => {
  const two = "server 127.0.0.1:9; server 127.0.0.1:10;";
  await t.step("proxy_pass", () => {
    const conf = compileText(
      `http { upstream backend { ${two} } server { location / { proxy_pass http://Backend; } } }`,
    );
    const location = conf.servers[0]!.conf.locations.prefixes[0]!;
    strictEqual(location.proxyPass!.group, "backend");
  });
  await t.step("fastcgi_pass", () => {
    deepStrictEqual(
      refusals(
        `http { upstream Php { ${two} } server { location / { fastcgi_pass php; } } }`,
      ),
      [],
    );
  });
  await t.step("a second block of the name in another case", () => {
    deepStrictEqual(
      refusals(
        `http { upstream a { ${two} } upstream A { ${two} } server { } }`,
      ),
      ['duplicate upstream "A" in /n/conf/nginx.conf:2'],
    );
  });
});

Deno.test("compileHttp() resolves proxy_redirect default from proxy_pass and the location", () => {
  const conf = compileText(`http {
    upstream backend { server 127.0.0.1:8080; }
    server {
      location /api/ { proxy_pass http://backend/; }
      location /raw/ { proxy_pass http://127.0.0.1:9000; }
      location /off/ { proxy_pass http://127.0.0.1:9000/; proxy_redirect off; }
    }
  }`);
  const text = (name: string) =>
    conf.servers[0]!.conf.locations.prefixes.find((l) => l.name === name)!
      .proxyRedirect.map((r) =>
        r.kind === "text" ? `${r.from.text} ${r.to.text}` : "regex"
      );
  deepStrictEqual(text("/api/"), ["http://backend/ /api/"]);
  // Without a URI part: the text and "/" → "/", as nginx 1.22 rewrites
  // (tests/proxy/location_nginx_test.ts holds it side by side).
  deepStrictEqual(text("/raw/"), ["http://127.0.0.1:9000/ /"]);
  deepStrictEqual(text("/off/"), []);
});

Deno.test("compileHttp() reports every refusal of a file in one run", () => {
  const errors = refusals(`http { server {
    location / { auth_request /x; }
    location ~ \\.php$ { proxy_pass http://127.0.0.1:9000/x; }
    location /v/ { proxy_pass https://$host; }
    location /u/ { return 200 $nosuch; }
    location @n { alias /x/; }
  } }`);
  deepStrictEqual(
    errors.map((e) => e.replace(/ in \/n\/conf\/nginx.conf:\d+$/, "")),
    [
      '"auth_request" is not supported: the gateway does not reproduce it',
      '"proxy_pass" cannot have URI part in location given by regular expression, or inside named location, or inside "if" statement, or inside "limit_except" block',
      '"proxy_pass https://$host" is not supported: the gateway forwards over http:// only',
      'unknown "nosuch" variable',
      '"alias" cannot be used in named location',
    ],
  );
});

Deno.test("compileHttp() evaluates proxy_pass variables after a literal host, and the whole URL with variables in the host", async (t) => {
  // [proxy_pass, the URI part evaluated per request, `url` when the whole
  // URL is, or the refusal]
  const table: [string, string][] = [
    ["http://127.0.0.1:9000/v3/$1", "/v3/$1"],
    ["http://127.0.0.1:9000$request_uri", "$request_uri"],
    ["http://127.0.0.1:9000${uri}", "${uri}"],
    ["http://backend/named$is_args$args", "/named$is_args$args"],
    ["http://127.0.0.1:9000?$args", "?$args"],
    ["http://$host", "url"],
    ["http://$cookie_proxy/?$args", "url"],
    ["http://127.0.0.1:$server_port/", "url"],
    // `$1` could go on with the port or the host: nginx parses it after.
    ["http://127.0.0.1:9000$1", "url"],
    ["$scheme://$host", "url"],
    ["https://$host", "refused"],
    ["http://127.0.0.1:9000$request_uri_x", "refused"],
  ];
  for (const [url, expected] of table) {
    await t.step(url, () => {
      const text = `http {
        upstream backend { server 127.0.0.1:9001; }
        server { location ~ ^/x/(.*)$ { proxy_pass ${url}; } }
      }`;
      const errors = refusals(text);
      if (expected === "refused") {
        strictEqual(errors.length, 1, errors.join("\n"));
        strictEqual(
          errors[0]!.includes("forwards over http:// only") ||
            errors[0]!.includes("unknown"),
          true,
          errors[0],
        );
        return;
      }
      deepStrictEqual(errors, []);
      const pass = compileText(text).servers[0]!.conf.locations.regexes[0]!
        .proxyPass!;
      if (expected === "url") {
        deepStrictEqual([pass.url?.text, pass.dynamic, pass.group], [
          url,
          null,
          "",
        ]);
      } else strictEqual(pass.dynamic?.text, expected);
      strictEqual(pass.uri, null);
    });
  }
});

Deno.test("findServer() chooses by name as ngx_http_find_virtual_server", async (t) => {
  const conf = compileText(`http {
    server { listen 80; server_name first.test; }
    server { listen 80; server_name www.example.com example.com; }
    server { listen 80; server_name *.example.com; }
    server { listen 80; server_name mail.*; }
    server { listen 80; server_name ~^(?<sub>\\w+)\\.regex\\.test$; }
    server { listen 80 default_server; server_name _; }
  }`);
  const group = groupByListen(conf.servers)[0]!;
  const table: [string, number][] = [
    ["www.example.com", 1],
    ["example.com", 1],
    ["a.example.com", 2],
    ["mail.other.org", 3],
    ["abc.regex.test", 4],
    ["unknown.test", 5],
    ["", 5],
  ];
  for (const [host, index] of table) {
    await t.step(host || "(none)", () => {
      strictEqual(findServer(group, host).server, conf.servers[index]);
    });
  }
});

Deno.test("map blocks: exact, regex with captures, default", async (t) => {
  const conf = compileText(`http {
    map $http_upgrade $connection_upgrade { default upgrade; '' close; }
    map $uri $section { default none; ~^/(?<s>[a-z]+)/ $1; /exact yes; }
    server { location / { return 200 "$connection_upgrade|$section"; } }
  }`);
  const table: [string, HeadersInit, string][] = [
    ["/", {}, "close|none"],
    ["/docs/x", { upgrade: "websocket" }, "upgrade|docs"],
    ["/exact", {}, "close|yes"],
  ];
  for (const [uri, headers, expected] of table) {
    await t.step(uri, () => {
      const loc = conf.servers[0]!.conf.locations.prefixes[0]!;
      const op = loc.rewrite!.ops[0]!;
      const vars = requestVars(uri, { headers });
      strictEqual(op.op === "return" ? op.value!.evaluate(vars) : "", expected);
    });
  }
});

Deno.test("compileHttp() leaves port 80 out of $proxy_host, as ngx_http_proxy_set_vars", () => {
  const conf = compileText(`http { server {
    location /a/ { proxy_pass http://127.0.0.1:80/; }
    location /b/ { proxy_pass http://127.0.0.1:8080/; }
    location /c/ { proxy_pass http://[::1]:80; }
  } }`);
  const host = (name: string) =>
    conf.servers[0]!.conf.locations.prefixes.find((l) => l.name === name)!
      .proxyPass!.proxyHost;
  deepStrictEqual(
    ["/a/", "/b/", "/c/"].map(host),
    ["127.0.0.1", "127.0.0.1:8080", "[::1]"],
  );
});

Deno.test("compileHttp() takes ip_hash, least_conn and hash as nginx 1.22 does", () => {
  /** [the upstream block's body, what --check says (nginx -t's words for backup)] */
  const cases: [string, string[]][] = [
    ["ip_hash; server 127.0.0.1:1;", []],
    ["ip_hash; server 127.0.0.1:1; server 127.0.0.1:2 weight=2;", []],
    // A backup written before ip_hash is kept; after it, nginx refuses it.
    ["server 127.0.0.1:1; server 127.0.0.1:2 backup; ip_hash;", []],
    ["ip_hash; server 127.0.0.1:1; server 127.0.0.1:2 backup;", [
      'balancing method does not support parameter "backup"',
    ]],
    ["least_conn; server 127.0.0.1:1;", []],
    ["least_conn; server 127.0.0.1:1; server 127.0.0.1:2;", []],
    // least_conn keeps backups (NGX_HTTP_UPSTREAM_BACKUP among its flags).
    ["least_conn; server 127.0.0.1:1; server 127.0.0.1:2 backup;", []],
    ["hash $remote_addr; server 127.0.0.1:1; server 127.0.0.1:2;", []],
    [
      "hash $request_uri consistent; server 127.0.0.1:1; server 127.0.0.1:2;",
      [],
    ],
    // 160 points per weight unit, for the process's life: bounded.
    [
      "hash $request_uri consistent; server 127.0.0.1:1 weight=1000; server 127.0.0.1:2;",
      [
        '"hash ... consistent" with a total weight of 1001 is not supported: the gateway makes 160 points per weight unit, up to a total weight of 1000 (lower the weights)',
      ],
    ],
    ["hash $request_uri ketama; server 127.0.0.1:1; server 127.0.0.1:2;", [
      'invalid parameter "ketama"',
    ]],
    ["hash $remote_addr; server 127.0.0.1:1; server 127.0.0.1:2 backup;", [
      'balancing method does not support parameter "backup"',
    ]],
  ];
  deepStrictEqual(
    cases.map(([body]) =>
      refusals(`http { upstream u { ${body} }
        server { location / { proxy_pass http://u; } } }`)
        .map((e) => e.replace(/ in \/n\/conf\/nginx.conf:\d+$/, ""))
    ),
    cases.map(([, said]) => said),
  );
});

Deno.test("compileHttp() says of keepalive_timeout what the gateway does: idle client connections stay open", () => {
  const outcome = (value: string, where: string) => {
    const text = where === "http"
      ? `events {}\nhttp { keepalive_timeout ${value}; server { listen 80; } }`
      : `events {}\nhttp { server { listen 80; keepalive_timeout ${value}; } }`;
    return messages(text);
  };
  const kept =
    '"keepalive_timeout" is ignored: the runtime keeps an idle client connection open until the client closes it';
  const table: [string, string, string][] = [
    ["65", "http", kept],
    ["75s 60s", "server", kept],
    [
      "0",
      "http",
      '"keepalive_timeout 0" is not supported: the gateway keeps client connections open',
    ],
  ];
  for (const [value, where, expected] of table) {
    deepStrictEqual(outcome(value, where), [expected], `${where}: ${value}`);
  }
});

Deno.test("compileHttp() runs stub_status in its own location only, warning once about its counts", () => {
  const file = "/n/conf/nginx.conf";
  const text = `events {}\nhttp { server {
    location = /basic_status { stub_status; }
    location /nginx_status { stub_status on; location /nginx_status/in { } }
    location / { }
  } }`;
  const result = compileHttp(
    parseNginxConf(file, { readTextFile: () => text, readDirFiles: () => [] }),
    { file, prefix: "/n", caseless: false },
  );
  deepStrictEqual(result.errors, []);
  deepStrictEqual(
    result.warnings.filter((w) => w.startsWith('"stub_status"')),
    [3, 4].map((line) =>
      `"stub_status": active connections are those with a request being answered; idle keep-alive connections are not seen (Waiting 0) in ${file}:${line}`
    ),
  );
  const locations = result.conf!.servers[0]!.conf.locations;
  strictEqual(locations.exact.get("/basic_status")!.stubStatus, true);
  const prefix = (name: string) =>
    locations.prefixes.find((l) => l.name === name)!;
  strictEqual(prefix("/nginx_status").stubStatus, true);
  // A content handler is the location's own: not inherited.
  strictEqual(
    prefix("/nginx_status").locations.prefixes[0]!.stubStatus,
    undefined,
  );
  strictEqual(prefix("/").stubStatus, undefined);
});

Deno.test("compileHttp() reads proxy_pass, upstream{} and listen addresses as ngx_parse_url does", () => {
  // The address as written → as nginx holds it (ngx_inet_addr,
  // ngx_inet6_addr): what is connected to or bound, never given to the
  // system's resolver, which reads `010` as octal.
  const table: [string, string][] = [
    ["127.0.0.010", "127.0.0.10"],
    ["127.000.000.001", "127.0.0.1"],
    ["127.0..1", "127.0.0.1"],
    ["[0:0:0:0:0:0:0:1]", "::1"],
    ["[::FFFF:7f00:1]", "::ffff:127.0.0.1"],
    // Names stay names.
    ["127.1", "127.1"],
    ["localhost", "127.0.0.1"],
  ];
  for (const [written, held] of table) {
    const conf = compileText(`http {
  upstream u { server ${written}:8080; }
  server {
    listen ${written}:8081;
    location /p/ { proxy_pass http://${written}:8082; }
    location /u/ { proxy_pass http://u; }
  }
}`);
    const servers = [...conf.upstreams.values()].map((u) =>
      u.servers.map((s) => `${s.hostname}:${s.port}`).join()
    ).sort();
    deepStrictEqual(
      servers,
      [`${held}:8080`, `${held}:8082`],
      written,
    );
    deepStrictEqual(
      conf.servers.flatMap((s) => s.listens.map((l) => l.hostname)),
      [held],
      written,
    );
  }
});
