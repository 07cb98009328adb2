/**
 * nginx's regexes as the gateway compiles them: a caseless (`~*`) one
 * spelled without the `i` flag matches and captures as the flag would, so
 * V8's linear engine can take over a match that backtracks too long; and a
 * gateway with such expressions keeps answering when a client's URI or
 * header would make them backtrack without bound.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { caselessSource, compileRegex } from "../../src/engine/regex.ts";
import { startNginxSite } from "../_nginx.ts";
import {
  freePort,
  maskErrorLine,
  rawRequest,
  spawnGateway,
} from "../_utils.ts";
import { nginxPrefix } from "../_prefix.ts";

const PATTERNS = [
  "\\.(js|css|PNG)$",
  "^/API/(?<rest>.*)$",
  "^/api/(?P<rest>.*)$",
  "[a-f0-9]+",
  "[^a-z]",
  "[-a]",
  "[a-]",
  "[^-a]",
  "[0-z]",
  "[\\d-z]",
  "[\\x41-\\x43]x",
  "\\x41",
  "\\u0041b",
  "\\cJ",
  "\\bFoo\\B",
  "(?:ab|CD){2}",
  "[]a",
  "[^]a",
  "[\\]a]",
  "(?<=a)b",
  "(?!x)y",
  "^(a+)+$",
  "(a)\\1",
  "(?<n>a)\\k<n>",
];

const INPUTS = [
  "/X.JS",
  "/api/Foo",
  "/API/bar",
  "ABC",
  "Z",
  "-",
  "A",
  "Q",
  "bx",
  "a",
  "\n",
  "foo ",
  "abCDAbcd",
  "xa",
  "AB",
  "Y",
  "aaaA",
  "Aa",
  "]",
  "Ab",
  "_",
  "`",
  "z",
];

Deno.test("compileRegex() caseless matches and captures as the i flag does", () => {
  for (const source of PATTERNS) {
    const flagged = new RegExp(source.replaceAll("(?P<", "(?<"), "i");
    const compiled = compileRegex(source, true);
    for (const input of INPUTS) {
      const want = flagged.exec(input);
      const got = compiled.exec(input);
      deepStrictEqual(
        [got?.slice(), got?.index, got?.groups],
        [want?.slice(), want?.index, want?.groups],
        `${source} on ${JSON.stringify(input)}`,
      );
    }
  }
});

Deno.test("compileRegex() caseless needs no i flag unless a backreference reads a group", () => {
  // [source, spelled out (null: kept with the i flag)]
  const cases: [string, string | null][] = [
    ["\\.(js|css)$", "\\.([jJ][sS]|[cC][sS][sS])$"],
    ["^/(?<Name>x)", "^/(?<Name>[xX])"],
    ["[a-f0-9]", "[A-Fa-f0-9]"],
    ["[-a]", "[A\\-a]"],
    ["[a-]", "[Aa-]"],
    ["\\x41\\w\\cJ", "[\\x41a]\\w\\cJ"],
    ["(a)\\1", null],
    ["(?<n>a)\\k<n>", null],
    ["[a", null],
  ];
  for (const [source, spelled] of cases) {
    strictEqual(caselessSource(source), spelled, source);
  }
  strictEqual(compileRegex("^(a+)+$", true).flags, "");
  strictEqual(compileRegex("(a)\\1", true).flags, "i");
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
  ];
  for (const [name, path, fields, host, answer] of cases) {
    await t.step(name, async () => {
      strictEqual(await get(path, fields, host), answer);
      strictEqual(await get("/", "X-M: aaa\r\n"), "evil\n");
    });
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
