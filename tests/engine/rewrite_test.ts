/**
 * What `rewrite` builds from a client's escaped URI, as nginx 1.22 builds
 * it: a capture in the arguments or in a redirect is escaped again (a
 * client's `%26` or `%0D%0A` stays data, never a new argument or a header
 * line), the arguments start at the replacement's own `?`, and a redirect
 * is unescaped once.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { escapeArgs, unescapeRedirect } from "../../src/engine/uri_escape.ts";
import { startSideBySide } from "../access/_side_by_side.ts";

Deno.test("escapeArgs() escapes what nginx 1.22's NGX_ESCAPE_ARGS escapes", () => {
  const cases: [string, string][] = [
    ["plain/path.html", "plain/path.html"],
    ["a&b=c", "a%26b=c"],
    ["a b+c;d?e#f%g", "a%20b%2Bc%3Bd%3Fe%23f%25g"],
    ['"<>\\^`{|}', "%22%3C%3E%5C%5E%60%7B%7C%7D"],
    ["\r\n\0\x7f", "%0D%0A%00%7F"],
    ["é€", "%C3%A9%E2%82%AC"],
    ["=:@!$'()*,~-._/", "=:@!$'()*,~-._/"],
  ];
  for (const [text, escaped] of cases) {
    strictEqual(escapeArgs(text), escaped, JSON.stringify(text));
  }
});

Deno.test("unescapeRedirect() decodes as nginx's NGX_UNESCAPE_REDIRECT", () => {
  const cases: [string, string][] = [
    ["/a%41%7e", "/aA~"],
    // Space, `!"#$%` and control bytes stay escaped, as bytes past ASCII.
    [
      "/%20%21%22%23%24%25%0D%0A%7F%C3%A9",
      "/%20%21%22%23%24%25%0D%0A%7F%C3%A9",
    ],
    ["/%26%2F", "/&/"],
    // Up to the first `?`, or an escaped one, which is decoded.
    ["/a%41?b%41", "/aA?b%41"],
    ["/a%3fb%41", "/a?b%41"],
    // A broken escape loses its `%` (and a bad second digit, its first).
    ["/a%zz", "/azz"],
    ["/a%4zb", "/ab"],
    ["/a%", "/a"],
  ];
  for (const [text, decoded] of cases) {
    strictEqual(unescapeRedirect(text), decoded, text);
  }
});

Deno.test("rewrite escapes a client's escaped captures in arguments and redirects as nginx", async (t) => {
  await using both = await startSideBySide({
    server: `
    location /rw/ { rewrite ^/rw/(.*)$ /echo?q=$1 last; }
    location /rx/ { rewrite ^/rx/(.*)$ /echo/$1 last; }
    location /rr/ { rewrite ^/rr/([^/]+)$ /new/$1 redirect; }
    location /re/ { rewrite ^/re/([^/]+)$ http://x.test/$1?k=$1 permanent; }
    location /rd/ { rewrite ^/rd/([^/]+)$ /new/$1? redirect; }
    location /echo { return 200 "uri=$uri args=$args\\n"; }`,
  });
  const targets = [
    // An argument smuggled through a capture: nginx keeps it one value.
    "/rw/a%26admin=1?orig=1",
    "/rw/a+b%20c?orig=1",
    // Not escaped by the client: copied as it is, by both.
    "/rw/plain&x=1?orig=1",
    // A `?` from a capture stays in the path; the request's args stay.
    "/rx/a%3Fadmin=1?orig=1",
    "/rx/a%3F?orig=1",
    // A line break from a capture is no header line.
    "/rr/a%0D%0ASet-Cookie:%20x=1",
    "/rr/a%20b%C3%A9",
    "/rr/a%22b%26c%2526",
    "/rr/abc?x=1",
    "/re/a%26b?o=1",
    "/rd/a%3Fb?o=1",
  ];
  for (const target of targets) {
    await t.step(target, async () => {
      const { ours, theirs } = await both.exchange(
        `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
      );
      const seen = (o: typeof ours) => [
        o.status,
        o.fields.filter((f) => f.startsWith("location:"))
          .map((f) => f.replace(/:\d+\//, ":PORT/")),
        o.body.startsWith("uri=") ? o.body : "",
      ];
      deepStrictEqual(seen(ours), seen(theirs));
    });
  }
});
