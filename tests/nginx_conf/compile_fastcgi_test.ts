/**
 * `fastcgi_pass` and its settings compiled as nginx 1.22 merges them:
 * `fastcgi_param` a list a level replaces whole, an `HTTP_*` parameter
 * standing for the client's field (an empty one sent not at all), an `if`
 * keeping its location's pass, and the refusals in `nginx -t`'s words.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { compileText, phases, refusals } from "../engine/_conf.ts";
import type { LocationConf } from "../../src/engine/mod.ts";
import { fastcgiSplit } from "../../src/engine/mod.ts";

function location(http: string, name: string): LocationConf {
  const conf = compileText(http);
  const server = conf.servers[0]!.conf;
  const all = [
    ...server.locations.prefixes,
    ...server.locations.regexes,
    ...server.locations.exact.values(),
  ];
  return all.find((l) => l.name === name)!;
}

const HTTP = `http {
  fastcgi_param FROM_HTTP h;
  upstream php { server 127.0.0.1:9001; server 127.0.0.1:9002; }
  server {
    listen 80;
    fastcgi_param FROM_SERVER s;
    fastcgi_read_timeout 5s;
    location /inherits/ { fastcgi_pass 127.0.0.1:9000; }
    location /replaces/ {
      fastcgi_pass php;
      fastcgi_param OWN $uri if_not_empty;
      fastcgi_param HTTP_HOST $host;
      fastcgi_param HTTP_X_GONE "";
      fastcgi_hide_header X-Powered-By;
      fastcgi_pass_header Status;
    }
    location /if/ {
      fastcgi_pass 127.0.0.1:9000;
      if ($arg_a) { set $x 1; }
    }
    location /static/ { }
  }
}`;

Deno.test("fastcgi_param: a level that sets any replaces the list; HTTP_ ones hide the client's field", () => {
  const inherits = location(HTTP, "/inherits/").fastcgi!;
  deepStrictEqual(inherits.params.map((p) => p.name), ["FROM_SERVER"]);
  strictEqual(inherits.group, "127.0.0.1:9000");
  strictEqual(inherits.timeouts.readMs, 5000);
  const replaces = location(HTTP, "/replaces/").fastcgi!;
  deepStrictEqual(
    replaces.params.map((p) => [p.name, p.ifNotEmpty]),
    [["OWN", true], ["HTTP_HOST", false]],
  );
  deepStrictEqual([...replaces.hiddenFields], ["host", "x_gone"]);
  strictEqual(replaces.group, "php");
  strictEqual(replaces.hideHeaders.has("x-powered-by"), true);
  strictEqual(replaces.hideHeaders.has("status"), false);
  strictEqual(location(HTTP, "/static/").fastcgi, undefined);
});

Deno.test("an if block keeps its location's fastcgi_pass", () => {
  const { content } = phases(compileText(HTTP), "/if/x?a=1");
  strictEqual(content.kind, "proxy");
  strictEqual(content.conf.match, "if");
  strictEqual(content.conf.fastcgi?.group, "127.0.0.1:9000");
  deepStrictEqual(content.conf.fastcgi?.params.map((p) => p.name), [
    "FROM_SERVER",
  ]);
});

Deno.test("fastcgi_pass's groups: an upstream{} by name, one per host:port", () => {
  const conf = compileText(HTTP);
  deepStrictEqual([...conf.fastcgiUpstreams!.keys()].sort(), [
    "127.0.0.1:9000",
    "php",
  ]);
  strictEqual(conf.fastcgiUpstreams!.get("php")!.servers.length, 2);
  strictEqual(conf.upstreams.has("127.0.0.1:9000"), false);
});

/** A location line and what nginx -t (1.22) says of it. */
const REFUSED: [string, string][] = [
  ["fastcgi_pass php;", 'no port in upstream "php"'],
  ["fastcgi_pass localhost;", 'no port in upstream "localhost"'],
  [
    "fastcgi_pass 127.0.0.1:9000; fastcgi_split_path_info ^(.+)$;",
    'pattern "^(.+)$" must have 2 captures',
  ],
  [
    "fastcgi_pass 127.0.0.1:9000; fastcgi_param A b c;",
    'invalid parameter "c"',
  ],
  [
    "fastcgi_pass unix:/run/php.sock;",
    '"fastcgi_pass unix:/run/php.sock" is not supported: the gateway reaches FastCGI over TCP only; listen on 127.0.0.1:PORT (php-cgi -b 127.0.0.1:9000)',
  ],
  [
    "fastcgi_pass $php;",
    '"fastcgi_pass $php" is not supported: the gateway does not evaluate variables in fastcgi_pass; name the address or an upstream{}',
  ],
];

Deno.test("fastcgi_pass and its settings are refused in nginx -t's words", () => {
  for (const [line, message] of REFUSED) {
    const http = `http { server { listen 80; location / { ${line} } } }`;
    deepStrictEqual(
      refusals(http).map((m) => m.replace(/ in \S+:\d+$/, "")),
      [message],
      line,
    );
  }
});

const SPLITS: [string, RegExp | null, string, string, string][] = [
  // [uri, split, index, script name, path info]
  ["/a.php/x/y", /^(.+?\.php)(\/.*)$/, "", "/a.php", "/x/y"],
  ["/a.php", /^(.+?\.php)(\/.*)$/, "", "/a.php", ""],
  ["/dir/", null, "index.php", "/dir/index.php", ""],
  ["/dir/", /^(.+\/)(.*)$/, "i.php", "/dir/i.php", ""],
  ["/x", null, "index.php", "/x", ""],
];

Deno.test("$fastcgi_script_name and $fastcgi_path_info as ngx_http_fastcgi_split makes them", () => {
  for (const [uri, split, index, script, info] of SPLITS) {
    deepStrictEqual(
      fastcgiSplit(uri, { split, index }),
      { scriptName: script, pathInfo: info },
      uri,
    );
  }
  deepStrictEqual(fastcgiSplit("/dir/", undefined), {
    scriptName: "/dir/",
    pathInfo: "",
  });
});
