import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { compileText, refusals } from "../engine/_conf.ts";
import type { CookieRewrite } from "../../src/engine/mod.ts";

Deno.test("compileHttp() reads proxy_cookie_domain and proxy_cookie_path as nginx", () => {
  const conf = compileText(`http { server {
    proxy_cookie_path /a/ /b/;
    location /x/ {
      proxy_cookie_domain .up.local .me.local;
      proxy_cookie_domain ~^(.*)\\.internal$ $1.example;
      proxy_cookie_path ~*^/ADMIN /admin;
      proxy_cookie_path ~^/Case /case;
    }
    location /y/ { proxy_cookie_path off; }
    location /z/ { }
  } }`);
  const [x, y, z] = ["/x/", "/y/", "/z/"].map((name) =>
    conf.servers[0]!.conf.locations.prefixes.find((l) => l.name === name)!
  );
  const shown = (list: readonly CookieRewrite[]) =>
    list.map((r) =>
      r.kind === "text"
        ? `${r.from.text} -> ${r.to.text}`
        : `/${r.regex.source}/${r.regex.flags} -> ${r.to.text}`
    );
  deepStrictEqual(shown(x!.proxyCookieDomain), [
    "up.local -> me.local",
    // Caseless, spelled with both cases (engine/regex.ts).
    "/^([^\\x0a]*)\\.[Ii][Nn][Tt][Ee][Rr][Nn][Aa][Ll]$/ -> $1.example",
  ]);
  deepStrictEqual(shown(x!.proxyCookiePath), [
    "/^\\/[Aa][Dd][Mm][Ii][Nn]/ -> /admin",
    "/^\\/Case/ -> /case",
  ]);
  strictEqual(y!.proxyCookiePath.length, 0);
  deepStrictEqual(shown(z!.proxyCookiePath), ["/a/ -> /b/"]);
});

Deno.test("compileHttp() refuses proxy_cookie_* values nginx refuses", () => {
  const errors = refusals(`http { server {
    location /a/ { proxy_cookie_path none; }
    location /b/ { proxy_cookie_domain off; proxy_cookie_domain a b; }
    location /c/ { proxy_cookie_path ~( /x; }
  } }`);
  deepStrictEqual(
    errors.map((e) => e.replace(/ in \/n\/conf\/nginx.conf:\d+$/, "")),
    [
      'invalid parameter "none"',
      '"proxy_cookie_domain" directive is duplicate',
      'pcre2_compile() failed: missing closing parenthesis in "("',
    ],
  );
});
