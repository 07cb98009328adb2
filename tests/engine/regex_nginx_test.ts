/**
 * nginx's regexes (PCRE2 without UTF, as nginx 1.22 compiles them) beside
 * the gateway's: the same nginx.conf runs on both, one server per pattern,
 * and each URI gets the same verdict (no match, or the match and its
 * captures); a pattern nginx refuses is refused with nginx's `[emerg]`
 * line, and one the gateway cannot run as PCRE2 does is refused by the
 * gateway alone (nginx takes it), never run as something else. Besides the
 * written table, a seeded generator draws 250 patterns (nested groups,
 * classes, options, lazy and possessive repeats, `$`, `\z`, `\Z`) and
 * URIs with newlines and spaces.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest } from "../_utils.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { refusals } from "./_conf.ts";
import { compileRegex } from "../../src/engine/regex.ts";

/** A pattern, `~*` or `~`, and the request targets it is tried on. */
interface Case {
  pattern: string;
  caseless?: boolean;
  uris: string[];
}

const CASES: Case[] = [
  // The attack's: PCRE syntax JavaScript reads as something else.
  {
    pattern: "^/admin/[[:alnum:]]+$",
    uris: ["/admin/panel", "/admin/a-b", "/admin/", "/admin/:"],
  },
  {
    pattern: "\\.(env|git)\\z",
    caseless: true,
    uris: ["/x/.env", "/x/.GIT", "/x/.env/a", "/x/.env%0A"],
  },
  { pattern: "\\A/a1", uris: ["/a1", "/b/a1", "/A1"] },
  { pattern: "^/a2\\z", uris: ["/a2", "/a2%0A", "/a2z"] },
  { pattern: "^/a3\\Z", uris: ["/a3", "/a3%0A", "/a3%0Ax", "/a3Z"] },
  {
    pattern: "^/a4[[:alpha:]]+[[:digit:]]$",
    uris: ["/a4ab1", "/a4a", "/a4:1", "/a41"],
  },
  { pattern: "^/a5\\h", uris: ["/a5h", "/a5%20", "/a5%09", "/a5"] },
  { pattern: "^/a6\\Qx.y\\E$", uris: ["/a6x.y", "/a6Qx.yE", "/a6xzy"] },
  { pattern: "^/a7\\x{41}\\x42\\101", uris: ["/a7ABA", "/a7x{41}", "/a7abA"] },
  { pattern: "^/a8\\R(.*)", uris: ["/a8%0D%0Ax", "/a8%0Ax", "/a8%0D", "/a8R"] },
  { pattern: "^/a9\\R\\n", uris: ["/a9%0D%0A", "/a9%0A%0A"] },
  {
    pattern: "\\.php$",
    uris: ["/a.php", "/a.php%0A", "/a.PHP", "/a.php%0A%0A"],
  },
  { pattern: "^/b0(.+)$", uris: ["/b0x%0D", "/b0x%0Ay", "/b0x%0A"] },
  // Inline options, comments, named groups, the other PCRE forms.
  { pattern: "(?i)\\.php$", uris: ["/a.PHP", "/a.php", "/a.phpx"] },
  { pattern: "^/b1(?i)x(?-i)y", uris: ["/b1Xy", "/b1XY", "/b1xy"] },
  { pattern: "^/b2(?s).$", uris: ["/b2%0A", "/b2x"] },
  { pattern: "^/b3(.)", uris: ["/b3%0A", "/b3%0D", "/b3x"] },
  { pattern: "(?x) ^/b4 a b  # a comment", uris: ["/b4ab", "/b4a%20b"] },
  { pattern: "^/b5(?U)(a+)(a*)", uris: ["/b5aaa"] },
  { pattern: "^/b6(a++)(a*)", uris: ["/b6aaa"] },
  { pattern: "^/b7(?>[a-z]*)z", uris: ["/b7abz", "/b7"] },
  { pattern: "^/b8(?|a|b)c", uris: ["/b8bc", "/b8cc"] },
  { pattern: "^/b9(?P<n>[a-z])(?P=n)", uris: ["/b9aa", "/b9ab"] },
  { pattern: "^/c1a(?#comment)b", uris: ["/c1ab", "/c1a(?"] },
  { pattern: "^/c2\\s", uris: ["/c2%20", "/c2%0B", "/c2%C2%A0", "/c2s"] },
  { pattern: "^/c3(\\d+)-(\\w+)$", uris: ["/c3123-ab_c", "/c3x-y"] },
  { pattern: "^/c4([^/]+)$", uris: ["/c4abc", "/c4a/b", "/c4caf%C3%A9"] },
  {
    pattern: "^/c5(?<year>\\d{4})/(?'m'\\d\\d)$",
    uris: ["/c52024/05", "/c5202/05"],
  },
  { pattern: "^/c6[\\Q]\\E-]+$", uris: ["/c6]-]", "/c6]x"] },
  { pattern: "^/c7\\x41\\101\\cA?$", uris: ["/c7AA", "/c7Aa"] },
  { pattern: "^/c8[[:^digit:]]+$", uris: ["/c8ab", "/c8a1"] },
  { pattern: "^/c9(?i)[[:upper:]]+$", uris: ["/c9abc", "/c9ABC"] },
  { pattern: "^/d1[a-c]+$", caseless: true, uris: ["/d1ABC", "/d1abd"] },
  { pattern: "^/d2(?i:AB)c", uris: ["/d2abc", "/d2abC"] },
  { pattern: "^/d3\\.\\bx", uris: ["/d3.x", "/d3.-"] },
  { pattern: "^/d4(a|ab)(c|bcd)(d*)$", uris: ["/d4abcd"] },
  { pattern: "^/d5(a)?(b)", uris: ["/d5b", "/d5ab"] },
  { pattern: "^/d6(?=[a-z]+$)(.*)", uris: ["/d6abc", "/d6ab1"] },
  { pattern: "^/d7(?<=/d7)a", uris: ["/d7a"] },
  { pattern: "^/d8a{2,3}$", uris: ["/d8aa", "/d8aaaa"] },
  { pattern: "^/d9a{,3}$", uris: ["/d9a%7B,3%7D", "/d9aa"] },
  { pattern: "^/e1(.*)\\.(jpg|png)$", uris: ["/e1x.y.jpg", "/e1.PNG"] },
  { pattern: "^/e2(?:(a)|b)(c)", uris: ["/e2bc", "/e2ac"] },
  { pattern: "^/e3(\\w+)/(?:x|(y))\\1", uris: ["/e3ab/xab", "/e3ab/yaB"] },
  { pattern: "(?i)^/E4(a)\\1", uris: ["/e4aA", "/E4ab"] },
  { pattern: "^/e5(/\\w+)+$", uris: ["/e5/a/bb", "/e5/"] },
  { pattern: "^/e6[\\w.-]+\\.[^./]+$", uris: ["/e6app-1.js", "/e6.js"] },
  { pattern: "^/e7\\t|^/e7\\e|^/e7\\$", uris: ["/e7%09", "/e7%1B", "/e7$"] },
  { pattern: "^/e8caf(.*)$", uris: ["/e8caf%C3%A9"] },
  { pattern: "^/e9[[:punct:]]+$", uris: ["/e9!~", "/e9a"] },
  { pattern: "(^|/)\\.", uris: ["/.git", "/a/.b", "/a.b"] },
  // `$` before a final newline, with the captures around it.
  { pattern: "^/f1(.*)$", uris: ["/f1ab%0A", "/f1a%0Ab%0A", "/f1ab"] },
  { pattern: "^/f2(a|b$)", uris: ["/f2b%0A", "/f2b", "/f2a%0A"] },
  { pattern: "^/f3(?<n>x(y)$)", uris: ["/f3xy%0A", "/f3xy"] },
  { pattern: "^/f4x$\\n", uris: ["/f4x%0A", "/f4x"] },
  { pattern: "^/f5([^/]+)$", uris: ["/f5ab%0A", "/f5ab"] },
  { pattern: "^/f6([^/]+?)$", uris: ["/f6ab%0A", "/f6ab"] },
  { pattern: "\\.php(/|$)", uris: ["/a.php%0A", "/a.php/x", "/a.phpx"] },
  { pattern: "^/f7(?:a$|(b))(c?)", uris: ["/f7a%0A", "/f7bc%0A"] },
  { pattern: "^/f8(a)(?=b?$)", uris: ["/f8a%0A", "/f8ab%0A"] },
  { pattern: "^/f9(a+)+$", uris: ["/f9aaa%0A", "/f9aab%0A"] },
  // Classes, escapes and options at their edges.
  { pattern: "^/g1[\\x{41}-\\x{43}]+$", uris: ["/g1ABC", "/g1ABD"] },
  { pattern: "^/g2[]a]+$", uris: ["/g2]a", "/g2b"] },
  { pattern: "^/g3[^]a]$", uris: ["/g3b", "/g3]"] },
  { pattern: "^/g4(?x)[ a]+$", uris: ["/g4%20a", "/g4a"] },
  { pattern: "^/g5\\N+$", uris: ["/g5ab", "/g5a%0A"] },
  { pattern: "^/g6(?n)(a)(?<x>b)", uris: ["/g6ab"] },
  { pattern: "^/g7\\12", uris: ["/g7%0A", "/g712"] },
  { pattern: "^/g8\\c~", uris: ["/g8%3E", "/g8~"] },
  { pattern: "^/h2[%--]+$", uris: ["/h2%25%2B-", "/h2."] },
  { pattern: "(?i)^/h3[^\\W]+$", uris: ["/h3aB", "/h3a-"] },
  { pattern: "^/h4a\\Q\\E+$", uris: ["/h4aaa"] },
  { pattern: "^/h5a(?#c)+$", uris: ["/h5aa"] },
  { pattern: "^/h6(?x)a b(?-x) c", uris: ["/h6ab%20c", "/h6abc"] },
  { pattern: "(?i)^/h7[k-m]+$", uris: ["/h7KLm", "/h7n"] },
  { pattern: "^/h8[\\Qa\\E-z]+$", uris: ["/h8az", "/h8-"] },
  { pattern: "^/h9[a-]+$|^/i1[-a]+$", uris: ["/h9a-", "/i1-a"] },
  { pattern: "^/i2[\\d-]+$", uris: ["/i2-1", "/i2a"] },
  { pattern: "^/i3(?U)a+?$", uris: ["/i3aaa"] },
  { pattern: "^/i4(\\w)(?:\\s|$)", uris: ["/i4a%0A", "/i4a", "/i4a%20"] },
  { pattern: "^/i5[ab]*+c", uris: ["/i5abc", "/i5c", "/i5ab"] },
  { pattern: "^/i6[^/]*+/", uris: ["/i6ab/", "/i6ab"] },
  { pattern: "(?i)^/I7(?:[a-c]++|X)z", uris: ["/i7ABz", "/i7xz"] },
  { pattern: "^/i8\\Ga\\b", uris: ["/i8a", "/i8ab"] },
  { pattern: "^/i9\\d{2,}?(\\d*)", uris: ["/i91234"] },
  { pattern: "^/j1[[:alpha]]+$", uris: ["/j1a:]", "/j1ph]"] },
  // PCRE2's word starts and ends, `\g` in a class, `\N{n}`, relative
  // references.
  {
    pattern: "^/k1/[[:<:]]ab[[:>:]]",
    uris: ["/k1/ab", "/k1/abc", "/k1/ab-"],
  },
  { pattern: "^/k2[\\g]+$", uris: ["/k2gg", "/k2x", "/k2%5C"] },
  { pattern: "^/k3\\N{2}$", uris: ["/k3ab", "/k3a", "/k3a%0A"] },
  { pattern: "^/k4(a)(b)\\g-2\\g{-1}", uris: ["/k4abab", "/k4abba"] },
  { pattern: "^/k5\\o{101}\\0101\\177", uris: ["/k5AA1%7F", "/k5aA1%7F"] },
  // Just within PCRE2's 64 KiB of code.
  { pattern: "^/k6(?:[Aa]b){0,3854}$", uris: ["/k6", "/k6Abab", "/k6aB"] },
  { pattern: "^/k7(ab){5460}", uris: ["/k7ab"] },
  // A class's leading `\E` and `^`, `(?xx)` spaces in a range, and what
  // stands between a quantifier and its `?`.
  { pattern: "^/k8[\\E]a]+$", uris: ["/k8]a", "/k8b"] },
  { pattern: "^/k9[\\E^a]$", uris: ["/k9b", "/k9a", "/k9^"] },
  { pattern: "(?xx)^/l1[a- c]+$", uris: ["/l1abc", "/l1%20", "/l1d"] },
  { pattern: "(?xx)^/l2[ ^a]+$", uris: ["/l2bc", "/l2a"] },
  { pattern: "^/l3(a+)\\E?(.*)", uris: ["/l3aaa"] },
  { pattern: "^/l4(a+)(?#c)?(.*)", uris: ["/l4aaa"] },
  { pattern: "(?x)^/l5(a+) ?(.*)", uris: ["/l5aaa"] },
  // Alpha assertions: PCRE2's other spelling of lookarounds and atomic groups.
  {
    pattern: "^/l6(*pla:a)(*nlb:b)(\\w)(*positive_lookbehind:a)",
    uris: ["/l6ab", "/l6b"],
  },
  { pattern: "^/l7(*atomic:[ab]+)b", uris: ["/l7abb", "/l7a"] },
  { pattern: "^/l8(*nla:x)(*negative_lookahead:y)\\w", uris: ["/l8a", "/l8x"] },
];

/** Patterns nginx 1.22 refuses (its `[emerg]` line is the gateway's too). */
const NGINX_REFUSES = [
  "\\i",
  "[\\w-a]",
  "[[:alpha:]-z]",
  "[a-[:digit:]]",
  "a{2}{3}",
  "[[.a.]]",
  "[:alpha:]",
  "[[:al-pha:]]",
  "\\x{g}",
  "\\x{41",
  "\\o{",
  "(?Pa)",
  `${"(".repeat(251)}a${")".repeat(251)}`,
  "[\\d-z]",
  "[a-\\d]",
  "(?<=a+)b",
  "(?<=a|bc(?:d|ef))x",
  "a{3,2}",
  "a{70000}",
  "*a",
  "(a",
  "a)",
  "[a",
  "[z-a]",
  "[[:foo:]]",
  "\\x{100}",
  "(?<n>a)(?<n>b)",
  "\\k<zz>",
  "\\1",
  "\\8",
  "\\c",
  "\\",
  "(?z)a",
  "\\b+",
  "\\g{-2}(a)",
  "(?<",
  "(?<n",
  "(?P=",
  "(?#abc",
  "(?P<1a>x)",
  // PCRE2's escape refusals: Perl's `\N{name}` and case escapes, octal
  // past a byte, `\o` without braces, group numbers out of range.
  "\\N{,2}",
  "\\N{}",
  "a\\N{U+41}",
  "\\N{99999}",
  "\\N{3,2}",
  "[a\\N]",
  "[\\N{,2}]",
  "\\400",
  "^/[\\777]",
  "\\Fa",
  "\\l",
  "a\\Ub",
  "\\u",
  "\\o",
  "\\ox",
  "\\o{400}",
  "[\\kx]",
  "\\g0",
  "\\g{0}a",
  "(a)\\g{-0}",
  "(a)\\g{+0}b",
  "\\g{99999}",
  "\\g70000a",
  "\\99999",
  "(a)\\g{-2}",
  "(a)\\g-2b",
  "\\g{1}a",
  "\\81a",
  "(?i-s-x)a",
  "(?^-i)a",
  // Code past PCRE2's 64 KiB: a counted repeat of a group copies it.
  "(ab){5461}",
  "(?:[ab]c){1599}",
  "(?:a|b){0,6000}",
  "x(?:(?:ab){1,9}){2000}",
  "^(?:(?<=ab)\\d{2,5}|[^/]+?){1000,3000}",
  "^/(?<=a{40000}b{40000})",
  "(?<=x|a{65535}b)c",
  // A class's leading `\E` is skipped: its `]` is a member.
  "[\\E]",
  "a?\\E?+",
  // Verbs and alpha assertions PCRE2 does not know, or malformed.
  "(*)",
  "a(*",
  "(*FOO)",
  "(*MARK)",
  "(*MARK:)",
  "a(*ACCEPT",
  "(*foo:a)",
  "(*pla)",
  "(?+a)",
  // PCRE2's own error further on comes before the gateway's refusal.
  "(?m)^a(",
  "a\\Kb)",
  "(?>a|ab)\\N{,2}",
  "(*COMMIT)a\\400",
];

/** Patterns nginx 1.22 takes that JavaScript cannot run as PCRE2 does. */
const GATEWAY_REFUSES = [
  "\\p{L}",
  "x{2,3}+",
  "(?=a)*",
  "(?P<a>x)(?P>a)",
  "\\g<1>(a)",
  "(?J)(?<a>x)(?<a>y)",
  "a\\Kb",
  "(?>a|ab)c",
  "a{2}+",
  "(?:(a)|b)\\1",
  "\\1(a)",
  "(?|(a)|(b))",
  "(?m)^a",
  "(a)(?(1)a|b)",
  "(?R)",
  "(*UTF)a",
  "(?:(x)|y)+",
  "(a?)+",
  "[é]",
  "é+",
  "(?<=a\\1)(b)",
  "^/e4(?i)(a)\\1",
  // A turn that matches nothing taken first: PCRE2 takes it, JavaScript
  // tries the next way.
  "^/e1(|b)?(.*)$",
  "^/e2(?:|b)+(.*)$",
  "^/e3(b??)?(.*)$",
  "^/e4(?<x>|b)?(?<y>.*)$",
  "^/e5((?:[a-z]*?)*)",
  "^/(x?|b)?c",
  // A counted repeat V8's linear engine cannot take, able to backtrack
  // without bound.
  "^/h/([a-z0-9-]{1,63}\\.?)+$",
  "^(?:a{1,10}){1,10}$",
  "^.*a{1,20}.*$",
  // Non-atomic assertions; a forward reference.
  "(?*a)",
  "(?<*a)b",
  "\\g{+1}(a)",
  "(*napla:a)",
  "(*sr:a)",
  "(*COMMIT)a",
  "a(*:m)b",
  "(a)(?-1)",
  "a\\Xb",
];

/** A pattern as a double-quoted nginx.conf string. */
const quoted = (pattern: string) =>
  `"${pattern.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

function conf(port: number, cases: readonly Case[] = CASES): string {
  const servers = cases.map(({ pattern, caseless }, i) =>
    `  server {
    listen 127.0.0.1:${port};
    server_name p${i};
    location ~${caseless ? "*" : ""} ${
      quoted(pattern)
    } { return 200 "m|$1|$2|$3\\n"; }
    location / { return 200 "no\\n"; }
  }`
  ).join("\n");
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log off;
${servers}
}
`;
}

/** The status and body of one request. */
async function verdict(
  port: number,
  host: string,
  uri: string,
): Promise<string> {
  const response = await rawRequest(
    port,
    `GET ${uri} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
  );
  const status = response.slice(9, 12);
  return `${status} ${response.slice(response.indexOf("\r\n\r\n") + 4)}`;
}

/** Each case's URIs on both sides: the gateway's verdicts equal nginx's. */
async function sameVerdicts(cases: readonly Case[]): Promise<void> {
  await using both = await bothSides((port) => conf(port, cases));
  const want: string[] = [];
  const got: string[] = [];
  for (const [i, { pattern, uris }] of cases.entries()) {
    for (const uri of uris) {
      const label = `${pattern} ${uri}: `;
      want.push(label + await verdict(both.nginx.port, `p${i}`, uri));
      got.push(label + await verdict(both.gateway.port, `p${i}`, uri));
    }
  }
  deepStrictEqual(got, want);
}

Deno.test("a regex matches and captures on the gateway what it does in nginx 1.22", async () => {
  await sameVerdicts(CASES);
});

/** A file with one location of `pattern`. */
const refusedConf = (pattern: string) =>
  `events {}
http {
${TEMP}
  access_log off;
  server { listen 127.0.0.1:1; location ~ ${quoted(pattern)} { return 204; } }
}
`;

Deno.test("a regex nginx 1.22 refuses is refused with nginx's [emerg] line", async () => {
  await using prefix = await nginxPrefix(
    (dir) => `${PROCESS}pid ${join(dir, "nginx.pid")};\n`,
    { name: "regex-refused-", dirs: ["conf", "logs", "temp"] },
  );
  const { conf } = prefix;
  const want: string[] = [];
  const got: string[] = [];
  for (const pattern of NGINX_REFUSES) {
    const text = refusedConf(pattern);
    await Deno.writeTextFile(conf, text);
    const output = await nginxTestOutput({ prefix: prefix.prefix, conf });
    const line = /\[emerg\] (.*) in \S+:\d+/.exec(output)?.[1] ?? output;
    // The offset PCRE2 names in a nesting refusal is not the gateway's.
    want.push(line.replace(/(too deeply nested in ".*?") at ".*/, "$1"));
    got.push(
      refusals(text.slice("events {}\n".length))
        .map((m) => m.replace(/ in \S+:\d+$/, ""))
        .map((m) => m.replace(/(too deeply nested in ".*?") at ".*/, "$1"))
        .join("; "),
    );
  }
  deepStrictEqual(got, want);
});

Deno.test("a regex nginx 1.22 takes but JavaScript cannot run as PCRE2 does is refused by the gateway", async () => {
  await using prefix = await nginxPrefix(
    (dir) => `${PROCESS}pid ${join(dir, "nginx.pid")};\n`,
    { name: "regex-unsupported-", dirs: ["conf", "logs", "temp"] },
  );
  const { conf } = prefix;
  for (const pattern of GATEWAY_REFUSES) {
    const text = refusedConf(pattern);
    await Deno.writeTextFile(conf, text);
    const output = await nginxTestOutput({ prefix: prefix.prefix, conf });
    // `nginx -t -q` says nothing of a file it takes.
    strictEqual(output, "", pattern);
    const ours = refusals(text.slice("events {}\n".length));
    strictEqual(ours.length, 1, pattern);
    match(ours[0]!, /^regex ".*" is not supported: /, pattern);
  }
});

Deno.test("a URI with a char above U+007F: nginx matches its bytes, the gateway its chars", async () => {
  // NAMED DIFFERENCE "regex-bytes": `.` takes one byte of `é` in nginx and
  // the whole char in the gateway; a capture of such text is the same text
  // (and a group named in any of PCRE2's spellings is a variable).
  await using both = await bothSides((port) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    location ~ ^/one/(.)$ { return 200 "one|$1\\n"; }
    location ~ ^/two/(..)$ { return 200 "two|$1\\n"; }
    location ~ ^/any/(.*)$ { return 200 "any|$1\\n"; }
    location ~ "^/named/(?'m'\\d+)$" { return 200 "named|$m\\n"; }
    location / { return 200 "no\\n"; }
  }
}
`
  );
  const uris = ["/one/%C3%A9", "/two/%C3%A9", "/any/caf%C3%A9", "/named/42"];
  const answers = async (port: number) => {
    const out: string[] = [];
    for (const uri of uris) out.push(await verdict(port, "h", uri));
    return out;
  };
  deepStrictEqual(await answers(both.nginx.port), [
    "200 no\n",
    "200 two|é\n",
    "200 any|café\n",
    "200 named|42\n",
  ]);
  deepStrictEqual(await answers(both.gateway.port), [
    "200 one|é\n",
    "200 no\n",
    "200 any|café\n",
    "200 named|42\n",
  ]);
});

Deno.test("map, if and rewrite regexes on fields and the URI match as nginx 1.22's", async () => {
  await using both = await bothSides((port) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log off;
  map $http_x_t $m {
    default no;
    "~^[[:alnum:]]+\\z" alnum;
    "~*^([[:upper:]]+)\\h" "up-$1";
    "~(?x) ^ a \\s b $" "x";
  }
  server {
    listen 127.0.0.1:${port};
    location /r/ {
      if ($uri ~ "\\Q/r/.\\E(?i)(AB)$") { return 200 "if|$1\\n"; }
      rewrite "^/r/(?P<n>[[:digit:]]+)\\z" /done/$n last;
      return 200 "m|$m\\n";
    }
    location /done/ { return 200 "done|$uri\\n"; }
  }
}
`
  );
  // [target, X-T field]
  const requests: [string, string][] = [
    ["/r/x", "abc1"],
    ["/r/x", "abc-"],
    ["/r/x", "aBc d"],
    ["/r/x", "AbC\td"],
    ["/r/x", "a b"],
    ["/r/x", "a\tb"],
    ["/r/.ab", ""],
    ["/r/xab", ""],
    ["/r/.AB%0A", ""],
    ["/r/123", ""],
    ["/r/123%0A", ""],
  ];
  const answers = async (port: number) => {
    const out: string[] = [];
    for (const [target, field] of requests) {
      const response = await rawRequest(
        port,
        `GET ${target} HTTP/1.1\r\nHost: h\r\nX-T: ${field}\r\nConnection: close\r\n\r\n`,
      );
      out.push(
        `${target} ${field}: ${response.slice(9, 12)} ${
          response.slice(response.indexOf("\r\n\r\n") + 4)
        }`,
      );
    }
    return out;
  };
  deepStrictEqual(
    await answers(both.gateway.port),
    await answers(both.nginx.port),
  );
});

/** A seeded generator (a linear congruence), the same table each run. */
function generator(seed: number): <T>(xs: readonly T[]) => T {
  let state = seed;
  return (xs) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return xs[state % xs.length]!;
  };
}

const ATOMS = [
  "a",
  "b",
  "x",
  "A",
  "\\d",
  "\\w",
  "\\s",
  ".",
  "\\.",
  "[ab]",
  "[^a]",
  "[a-c]",
  "[^B]",
  "[[:alpha:]]",
  "[^[:digit:]]",
  "\\h",
  "\\W",
  "\\S",
  "\\v",
  "\\R",
  "\\N",
  "(a)\\1",
  "(?i:B)",
  "(?-i)a",
  "(?=a)",
  "(?<=a)",
  "(?!b)",
  "\\b",
  "\\B",
  "(?x) a",
];
const QUANTIFIERS = [
  "",
  "",
  "",
  "*",
  "+",
  "?",
  "{1,2}",
  "*?",
  "+?",
  "??",
  "{2}",
  "*+",
  "++",
];
const SUBJECT_PARTS = [
  "a",
  "b",
  "x",
  "1",
  "-",
  "%20",
  "%0A",
  "%0D",
  "%09",
  "A",
  "B",
  "ab",
  "_",
];

/** Generated patterns the gateway takes, each with generated URIs. */
function generatedCases(count: number): Case[] {
  const pick = generator(1);
  const sequence = (depth: number): string => {
    let out = "";
    for (let i = pick([1, 2, 3]); i > 0; i--) {
      const kind = depth < 2 ? pick([0, 1, 2, 3, 3, 3, 3, 3, 3, 3]) : 3;
      const atom = kind === 0
        ? `(${sequence(depth + 1)}|${sequence(depth + 1)})`
        : kind === 1
        ? `(?:${sequence(depth + 1)})`
        : kind === 2
        ? `(${sequence(depth + 1)})`
        : pick(ATOMS);
      out += atom + pick(QUANTIFIERS);
    }
    return out;
  };
  const cases: Case[] = [];
  // Bounded: a pattern the gateway refuses is drawn again.
  for (let i = 0; cases.length < count && i < count * 10; i++) {
    const caseless = pick([false, true]);
    const pattern = pick(["", "", "(?i)", "(?s)"]) + pick(["^/", "/", ""]) +
      sequence(0) + pick(["", "$", "$", "\\z", "\\Z"]);
    try {
      compileRegex(pattern, caseless);
    } catch {
      continue;
    }
    const uris = Array.from({ length: 6 }, () => {
      let uri = "/";
      for (let n = pick([0, 1, 2, 3, 4]); n > 0; n--) {
        uri += pick(SUBJECT_PARTS);
      }
      return uri;
    });
    cases.push({ pattern, caseless, uris });
  }
  return cases;
}

Deno.test("generated regexes match and capture on the gateway what they do in nginx 1.22", async () => {
  await sameVerdicts(generatedCases(250));
});
