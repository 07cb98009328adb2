/**
 * A back end's address in `proxy_pass`, an upstream's `server` and
 * `fastcgi_pass`, read as nginx 1.22 reads it (ngx_http_proxy_pass,
 * ngx_parse_url): a scheme but `http://`/`https://` is `invalid URL prefix`;
 * an address without a host, with a port out of 1–65535 or not a number, an
 * IPv6 address without its `]`, or a URI where none may follow is refused
 * in nginx's words, `… in upstream "TEXT"`, quoting what follows the scheme.
 * The first refusal of each is checked against `nginx -t`.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { refusals } from "../engine/_conf.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { runStartup } from "../_in_process.ts";
import { freePort, refusedPort } from "../_utils.ts";
import { parseUpstreamAddress } from "../../src/upstream/mod.ts";

const PASS = (url: string) => `location / { proxy_pass ${url}; }`;
const SERVER = (address: string) =>
  `location / { proxy_pass http://g; } } upstream g { server ${address};`;
const FASTCGI = (address: string) => `location / { fastcgi_pass ${address}; }`;

/** [a server's lines, nginx 1.22's first `[emerg]` message or none] */
const LINES: [string, string | null][] = [
  [PASS("http://10.0.0.5:8080/api/"), null],
  [PASS("HTTP://10.0.0.5"), null],
  [PASS("http://[::1]:8080/x"), null],
  [PASS("10.0.0.5:8080"), "invalid URL prefix"],
  [PASS("localhost"), "invalid URL prefix"],
  [PASS("ftp://10.0.0.5"), "invalid URL prefix"],
  [PASS("http:/10.0.0.5"), "invalid URL prefix"],
  [PASS("http://"), 'no host in upstream ""'],
  [PASS("https://"), 'no host in upstream ""'],
  [PASS("http:///api"), 'no host in upstream "/api"'],
  [PASS("http://:8080/x"), 'no host in upstream ":8080/x"'],
  [PASS("http://10.0.0.5:99999"), 'invalid port in upstream "10.0.0.5:99999"'],
  [PASS("http://10.0.0.5:/x"), 'invalid port in upstream "10.0.0.5:/x"'],
  [PASS("http://10.0.0.5:x"), 'invalid port in upstream "10.0.0.5:x"'],
  [PASS("https://10.0.0.5:0"), 'invalid port in upstream "10.0.0.5:0"'],
  // nginx ends a host at `/` or `?` only.
  [PASS("http://10.0.0.5:80#x"), 'invalid port in upstream "10.0.0.5:80#x"'],
  [PASS("http://[::1/x"), 'invalid host in upstream "[::1/x"'],
  [PASS("http://[zz]/"), 'invalid IPv6 address in upstream "[zz]/"'],
  [SERVER("10.0.0.5:8080"), null],
  [SERVER("[::1]"), null],
  [SERVER(":8080"), 'no host in upstream ":8080"'],
  [SERVER("10.0.0.5:99999"), 'invalid port in upstream "10.0.0.5:99999"'],
  [SERVER("10.0.0.5:0"), 'invalid port in upstream "10.0.0.5:0"'],
  [SERVER("[::1]:x"), 'invalid port in upstream "[::1]:x"'],
  [SERVER("10.0.0.5/x"), 'invalid host in upstream "10.0.0.5/x"'],
  [SERVER("[::1"), 'invalid host in upstream "[::1"'],
  [SERVER("[zz]:80"), 'invalid IPv6 address in upstream "[zz]:80"'],
  // ngx_http_upstream_init_round_robin counts the primaries, `down` too.
  [SERVER("10.0.0.5:8080 backup"), 'no servers in upstream "g"'],
  [SERVER("10.0.0.5:8080 down backup"), 'no servers in upstream "g"'],
  [SERVER("10.0.0.5:8080 down; server 10.0.0.6 backup"), null],
  [SERVER("10.0.0.5:8080 down"), null],
  [FASTCGI("127.0.0.1:9000"), null],
  [FASTCGI(":9000"), 'no host in upstream ":9000"'],
  [FASTCGI("10.0.0.5:x"), 'invalid port in upstream "10.0.0.5:x"'],
  [FASTCGI("10.0.0.5:9000/x"), 'invalid host in upstream "10.0.0.5:9000/x"'],
  [FASTCGI("10.0.0.5"), 'no port in upstream "10.0.0.5"'],
];

function conf(lines: string): string {
  return `http { server { listen 127.0.0.1:1; ${lines} } }`;
}

Deno.test("a back end's address is refused in nginx's words", async (t) => {
  for (const [lines, expected] of LINES) {
    await t.step(lines, () => {
      const first = refusals(conf(lines))[0];
      deepStrictEqual(first?.replace(/ in \/n\/.*$/, "") ?? null, expected);
    });
  }
});

Deno.test("--check accepts an upstream whose primaries are all down beside a backup, as nginx", async () => {
  // Loopback ports nothing listens on: --check's probe of each server
  // stays on this machine.
  const lines = SERVER(
    `127.0.0.1:${refusedPort()} down; server 127.0.0.1:${refusedPort()} backup`,
  );
  await using p = await nginxPrefix(
    `events {}\nhttp { server { listen 127.0.0.1:${freePort()}; ${lines} } }`,
    { name: "upstream-down-" },
  );
  const { code, stderr } = await runStartup([
    "--check",
    "--nginx-conf",
    p.conf,
  ]);
  deepStrictEqual({ code, emerg: /\[emerg\].*/.exec(stderr)?.[0] ?? null }, {
    code: 0,
    emerg: null,
  });
});

Deno.test("the address refusals are nginx 1.22's", async () => {
  await using p = await nginxPrefix("", {
    name: "upstream-address-",
    dirs: ["logs"],
  });
  const file = join(p.prefix, "nginx.conf");
  for (const [lines, expected] of LINES) {
    await Deno.writeTextFile(file, `events {}\n${conf(lines)}`);
    const text = await nginxTestOutput({ prefix: p.prefix, conf: file });
    const said = /\[emerg\] (?:\d+#\d+: )?(.*) in \//.exec(text)?.[1] ?? null;
    deepStrictEqual(said, expected, lines);
  }
});

Deno.test("parseUpstreamAddress() reads an address where no URI may follow as ngx_parse_url", () => {
  const ok = (host: string, port: number, noPort: boolean, uri = "") => ({
    ok: true as const,
    host,
    port,
    noPort,
    uri,
  });
  const fail = (error: string) => ({ ok: false as const, error });
  const cases: [string, boolean, ReturnType<typeof parseUpstreamAddress>][] = [
    ["10.0.0.5", false, ok("10.0.0.5", 80, true)],
    ["a:8080/x?y", true, ok("a", 8080, false, "/x?y")],
    ["[::1]:80/", true, ok("[::1]", 80, false, "/")],
    ["[::1]:80", false, ok("[::1]", 80, false)],
    ["a:0000080", false, ok("a", 80, false)],
    // ngx_parse_inet_url: a URI where none may follow is `invalid host`.
    ["a/x", false, fail("invalid host")],
    ["a?x", false, fail("invalid host")],
    ["[::1]/x", false, fail("invalid host")],
    ["[::1]x", false, fail("invalid host")],
    ["[]", false, fail("no host")],
    [":80", false, fail("no host")],
    ["a:", false, fail("invalid port")],
    ["a:-1", false, fail("invalid port")],
    ["a:65536", false, fail("invalid port")],
  ];
  for (const [text, uriPart, expected] of cases) {
    deepStrictEqual(parseUpstreamAddress(text, uriPart), expected, text);
  }
});
