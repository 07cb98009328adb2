import { strictEqual } from "node:assert/strict";
import { charsetFilter } from "../../src/response/mod.ts";
import { NGINX_CHARSET_TYPES } from "../../src/static/mod.ts";

Deno.test("charsetFilter() adds the charset only where nginx 1.22 does", async (t) => {
  const utf8 = { charset: "utf-8", charsetTypes: NGINX_CHARSET_TYPES };
  const off = { charset: null, charsetTypes: NGINX_CHARSET_TYPES };
  const any = { charset: "gbk", charsetTypes: new Set(["*"]) };
  const cases: [
    string | null,
    number,
    typeof utf8 | typeof off | typeof any,
    string | null,
  ][] = [
    ["text/html", 200, off, "text/html"], // no charset unless configured
    ["text/html", 200, utf8, "text/html; charset=utf-8"],
    ["TEXT/PLAIN", 200, utf8, "TEXT/PLAIN; charset=utf-8"],
    [
      "application/javascript",
      200,
      utf8,
      "application/javascript; charset=utf-8",
    ],
    ["text/css", 200, utf8, "text/css"], // not in the default charset_types
    ["text/css", 200, any, "text/css; charset=gbk"],
    ["image/png", 404, any, "image/png; charset=gbk"],
    ["text/html", 301, utf8, "text/html"], // ngx_http_set_charset
    ["text/html", 302, utf8, "text/html"],
    ["text/html", 303, utf8, "text/html; charset=utf-8"],
    ["text/html", 404, utf8, "text/html; charset=utf-8"],
    ["text/html; charset=gbk", 200, utf8, "text/html; charset=gbk"],
    ["text/html; foo=bar", 200, utf8, "text/html; foo=bar"],
    [null, 200, utf8, null],
    ["", 204, utf8, ""],
  ];
  for (const [type, status, conf, want] of cases) {
    await t.step(`${type} ${status} ${conf.charset}`, () => {
      strictEqual(charsetFilter(type, status, conf), want);
    });
  }
});
