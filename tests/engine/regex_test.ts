/**
 * nginx's regexes as the gateway compiles them: a caseless one folds ASCII
 * letters only, as PCRE2 without UTF, spelled out without the `i` flag so
 * V8's linear engine can take over a match that backtracks too long; nginx
 * for Windows compiles every location regex caseless and no other; and a
 * gateway with such expressions keeps answering when a client's URI (one
 * ending in `%0A` too) or header would make them backtrack without bound.
 * What each pattern matches beside nginx: regex_nginx_test.ts.
 */
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { compileRegex } from "../../src/engine/regex.ts";
import { compileText, describe, phases } from "./_conf.ts";
import { startNginxSite } from "../_nginx.ts";
import {
  freePort,
  maskErrorLine,
  rawRequest,
  spawnGateway,
} from "../_utils.ts";
import { nginxPrefix } from "../_prefix.ts";

Deno.test("compileRegex() caseless folds ASCII letters only and needs no i flag unless a backreference reads a group", () => {
  // [pattern, subject, the match or null]
  const table: [string, string, string | null][] = [
    ["\\.(js|css)$", "/A.JS", ".JS"],
    ["[a-f]+", "xBcF", "BcF"],
    ["[^a-c]", "Ab", null],
    ["[[:lower:]]+", "aBc", "aBc"],
    ["\\x41", "a", "a"],
    ["^caf\u00e9$", "caf\u00c9", null],
    ["\u00e9", "\u00c9", null],
    ["(?-i)a", "A", null],
    ["(?<n>x)", "X", "X"],
  ];
  for (const [source, subject, want] of table) {
    strictEqual(
      compileRegex(source, true).exec(subject)?.[0] ?? null,
      want,
      source,
    );
    strictEqual(compileRegex(source, true).flags, "", source);
  }
  strictEqual(compileRegex("(a)\\1", true).exec("aA")?.[0], "aA");
  strictEqual(compileRegex("(a)\\1", true).flags, "i");
  strictEqual(compileRegex("^(a+)+$", true).flags, "");
});

Deno.test("nginx for Windows compiles every location regex caseless, and no other regex", () => {
  const http = `http { map $uri $m { default ""; ~^/MAP 1; } server {
  location ~ \\.php$ { return 201; }
  location ~ ^/Sub/ { location ~ \\.TXT$ { return 203; } return 202; }
  location = /rw-done { return 206; }
  location / {
    if ($uri ~ ^/IF) { return 204; }
    if ($m) { return 205; }
    rewrite ^/RW /rw-done last;
    return 200;
  }
} }`;
  // [URI, on Linux, on Windows] (ngx_http_core_regex_location; `if`,
  // `map` and `rewrite` compile theirs as written on both)
  const table: [string, number, number][] = [
    ["/a.PHP", 200, 201],
    ["/a.php", 201, 201],
    ["/sub/x", 200, 202],
    ["/sub/x.txt", 200, 203],
    ["/Sub/x.txt", 202, 203],
    ["/if", 200, 200],
    ["/IF", 204, 204],
    ["/map", 200, 200],
    ["/MAP", 205, 205],
    ["/rw", 200, 200],
    ["/RW", 206, 206],
  ];
  const linux = compileText(http, false);
  const windows = compileText(http, true);
  const code = (conf: typeof linux, uri: string) => {
    const { content } = phases(conf, uri);
    return content.kind === "return" ? content.code : describe(content);
  };
  for (const [uri, onLinux, onWindows] of table) {
    deepStrictEqual([code(linux, uri), code(windows, uri)], [
      onLinux,
      onWindows,
    ], uri);
  }
});

Deno.test("compileRegex() takes a pattern as long as nginx reads a parameter, and refuses a longer one", () => {
  // nginx's lexer ends a parameter at its 4096-byte buffer.
  for (
    const source of ["a".repeat(4096), "[^a]".repeat(1024), "(a|b)".repeat(819)]
  ) {
    strictEqual(
      compileRegex(source, true).test(source),
      source.startsWith("a"),
    );
  }
  throws(
    () => compileRegex("a".repeat(4097), false),
    /is not supported: longer than 4096 chars/,
  );
});

/** A prefix with `conf/nginx.conf` holding `text`. */
const prefixWith = (text: (prefix: string) => string) =>
  nginxPrefix(text, { name: "regex-gw-" });

Deno.test("a URI, Host or header that makes a regex backtrack without bound does not stall the gateway", async (t) => {
  const port = freePort();
  await using p = await prefixWith((prefix) =>
    `events {}
http {
  error_log ${prefix}/logs/error.log;
  access_log off;
  map $http_x_m $mapped { default d; ~*^(a+)+$ evil; }
  server {
    listen 127.0.0.1:${port};
    server_name ~^(b+)+$;
    location ~ ^/poly/(.*)/(.*)/(.*)/(.*)x$ { return 200 "poly\\n"; }
    location ~* ^/(A+)+$ { return 200 "caseless\\n"; }
    location / { return 200 "$mapped\\n"; }
  }
}`
  );
  await using gw = await spawnGateway(["--nginx-conf", p.conf]);
  const get = async (path: string, fields = "", host = "h") => {
    const raw = await rawRequest(
      gw.port,
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${fields}Connection: close\r\n\r\n`,
    );
    return raw.split("\r\n\r\n")[1] ?? "no answer";
  };
  // Each of these takes the backtracking engine minutes (2^40 steps, or
  // 3,000^4 for the four groups); nginx answers 500 at PCRE's match limit.
  const a40 = "a".repeat(40);
  // [what, path, fields, Host, the answer]
  const cases: [string, string, string, string, string][] = [
    ["location ~*", `/${a40}!`, "", "h", "d\n"],
    ["location ~", `/poly/${"a/".repeat(3000)}`, "", "h", "d\n"],
    ["map ~*", "/", `X-M: ${a40}!\r\n`, "h", "d\n"],
    ["server_name ~", "/", "", `${"b".repeat(40)}!`, "d\n"],
    // PCRE2's `$` also matches before a final newline: such a subject
    // runs a variant of the expression that keeps the linear engine.
    ["location ~* before %0A", `/${a40}!%0A`, "", "h", "d\n"],
  ];
  for (const [name, path, fields, host, answer] of cases) {
    await t.step(name, async () => {
      strictEqual(await get(path, fields, host), answer);
      strictEqual(await get("/", "X-M: aaa\r\n"), "evil\n");
    });
  }
});

Deno.test("compileRegex() refuses a pattern V8's linear engine cannot take when it can backtrack without bound", () => {
  // [pattern, refused]: counted repeats over 16 (or nested ones whose
  // bounds multiply past 16) leave only the backtracking engine.
  const cases: [string, boolean][] = [
    ["^/h/([a-z0-9-]{1,63}\\.?)+$", true],
    ["^(a{1,20})+$", true],
    ["^(?:a|a){1,30}$", true],
    ["^(?:a{1,10}){1,10}$", true],
    ["^/(?:a{0,17})*!", true],
    ["^.*a{1,20}.*$", true],
    ["^/(?:a{0,16})*!", false],
    ["^/api/v[0-9]{1,20}/", false],
    ["^/[a-z]{1,63}$", false],
    ["^/x{2,40}(y|z)$", false],
    ["^(a+)+$", false],
    ["(?:a{1,4}){1,4}", false],
  ];
  for (const [pattern, refused] of cases) {
    let message = "";
    try {
      compileRegex(pattern, false);
    } catch (error) {
      message = (error as Error).message;
    }
    strictEqual(
      /can backtrack without bound/.test(message),
      refused,
      `${pattern}: ${message}`,
    );
  }
});

Deno.test("nginx answers 500 at PCRE's match limit where the gateway finds the answer", async () => {
  // NAMED DIFFERENCE "regex-backtracking": nginx stops PCRE at its match
  // limit, answers 500 and logs an [alert]; the gateway's linear engine
  // finishes the match, so the request gets the answer nginx would give
  // with no limit.
  await using nginx = await startNginxSite({
    server: `location ~* ^/(A+)+$ { return 200 "caseless\\n"; }
    location / { return 200 "d\\n"; }`,
  });
  const path = `/${"a".repeat(40)}!`;
  const raw = await rawRequest(
    nginx.port,
    `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
  );
  strictEqual(raw.slice(9, 12), "500");
  const alert = nginx.errorLines().find((l) => l.includes("[alert]"));
  strictEqual(
    alert === undefined ? "none" : maskErrorLine(alert),
    `TIME [alert] PID#TID: *N pcre2_match() failed: -47 on "${path}" using "^/(A+)+$", client: 127.0.0.1, server: localhost, request: "GET ${path} HTTP/1.1", host: "localhost"`,
  );
});
