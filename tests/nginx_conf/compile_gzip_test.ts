import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { compileText, refusals } from "../engine/_conf.ts";

function location(http: string, name = "/a/") {
  const conf = compileText(http);
  const server = conf.servers[0]!;
  return server.conf.locations.prefixes.find((l) => l.name === name) ??
    server.conf;
}

Deno.test("compileHttp() gives gzip nginx 1.22's defaults", () => {
  const conf = location("http { server { location /a/ { } } }");
  deepStrictEqual(conf.gzip, {
    enabled: false,
    level: 1,
    minLength: 20,
    types: new Set(["text/html"]),
  });
  deepStrictEqual(conf.gzipOk, {
    httpVersion: "1.1",
    proxied: new Set(["off"]),
    disable: [],
    disableMsie6: false,
  });
});

Deno.test("compileHttp() inherits gzip settings from the nearest level that sets each", () => {
  const conf = location(`http {
    gzip on; gzip_comp_level 6; gzip_types application/json; gzip_disable msie6 "^curl";
    gzip_proxied expired Private;
    server {
      gzip_min_length 1k;
      location /a/ { gzip_types text/css Text/JS; gzip_types application/x; gzip_disable "^wget"; gzip_http_version 1.0; }
    }
  }`);
  strictEqual(conf.gzip.enabled, true);
  strictEqual(conf.gzip.level, 6);
  strictEqual(conf.gzip.minLength, 1024);
  deepStrictEqual(
    conf.gzip.types,
    new Set(["text/html", "text/css", "text/js", "application/x"]),
  );
  deepStrictEqual(conf.gzipOk.proxied, new Set(["expired", "private"]));
  strictEqual(conf.gzipOk.httpVersion, "1.0");
  // The level's own regex list; msie6 inherited on its own.
  // One regex, caseless ("^wget" spelled with both cases: engine/regex.ts).
  deepStrictEqual(
    ["Wget/1.21", "wget", "curl/8"].map((ua) =>
      conf.gzipOk.disable.some((r) => r.test(ua))
    ),
    [true, true, false],
  );
  strictEqual(conf.gzipOk.disableMsie6, true);
  const any = location("http { server { gzip_types *; location /a/ { } } }");
  deepStrictEqual(any.gzip.types, new Set(["*"]));
});

Deno.test("compileHttp() refuses gzip values nginx refuses, once each, with its messages", () => {
  const errors = refusals(`http { server {
    gzip_comp_level 0;
    location /a/ { gzip_comp_level x; }
    location /b/ { gzip_http_version 2.0; }
    location /c/ { gzip_proxied off sometimes; }
    location /d/ { gzip_min_length 1x; }
    location /e/ { gzip_disable "(unclosed"; }
  } }`);
  deepStrictEqual(
    errors.map((e) => e.replace(/ in \/n\/conf\/nginx.conf:\d+$/, "")),
    [
      "value must be between 1 and 9",
      '"gzip_comp_level" directive invalid number',
      'invalid value "2.0"',
      'invalid value "sometimes"',
      '"gzip_min_length" directive invalid value',
      'pcre2_compile() failed: missing closing parenthesis in "(unclosed"',
    ],
  );
});
