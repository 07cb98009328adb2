import { strictEqual } from "node:assert/strict";
import { cookieValue, setCookieValue } from "../../src/engine/cookie_field.ts";

/** [Cookie field, name, nginx 1.22's value (undefined: not found)] */
const COOKIE: [string, string, string | undefined][] = [
  ["a=1; b=2", "b", "2"],
  ["a=1;b=2", "b", "2"],
  ["a=1,b=2", "a", "1,b=2"],
  ["a=1,b=2", "b", "2"],
  ["A = 1 ; B=2", "a", "1 "],
  ["A = 1 ; B=2", "B", "2"],
  ["a; b=2; c=3", "a", undefined],
  ["a; b=2; c=3", "b", "2"],
  ["a; b=2; c=3", "c", "3"],
  // The separator after the bare name sought is consumed with it, so the
  // pair after it is skipped (ngx_http_parse_multi_header_lines).
  ["a;a=2", "a", undefined],
  ["a;b=2", "b", "2"],
  ["a=; b=", "a", ""],
  ["a=; b=", "b", ""],
  ["x=1; aa=2; a=3", "a", "3"],
  ["a=1; a=2", "a", "1"],
  ["c=1,d=2;e", "d", "2"],
  ["c=1,d=2;e", "e", undefined],
  ["a=1;;  ; b=2", "b", "2"],
  ["a=\t1", "a", "\t1"],
  ["\ta=1", "a", undefined],
  ["ab=1", "a", undefined],
  ["a", "ab", undefined],
  ["", "a", undefined],
];

Deno.test("cookieValue() separates pairs as nginx 1.22's $cookie_NAME", async (t) => {
  for (const [field, name, expected] of COOKIE) {
    await t.step(`${JSON.stringify(field)} ${name}`, () => {
      strictEqual(cookieValue(field, name), expected);
    });
  }
});

/** [Set-Cookie lines, name, nginx 1.22's value] */
const SET_COOKIE: [string[], string, string | undefined][] = [
  [["sid=1; Path=/"], "sid", "1"],
  [["sid=1; Path=/"], "path", undefined],
  [["LANG = en ;Max-Age=9"], "lang", "en "],
  [["a=x, b=y"], "a", "x, b=y"],
  [["a=x, b=y"], "b", undefined],
  [["sid=1", "sid=2"], "sid", "1"],
  [["x=1", "sid=2"], "sid", "2"],
  [["sid"], "sid", undefined],
  [["sid="], "sid", ""],
];

Deno.test("setCookieValue() reads each Set-Cookie line's first pair as nginx 1.22's $upstream_cookie_NAME", async (t) => {
  for (const [lines, name, expected] of SET_COOKIE) {
    await t.step(`${JSON.stringify(lines)} ${name}`, () => {
      strictEqual(setCookieValue(lines, name), expected);
    });
  }
});
