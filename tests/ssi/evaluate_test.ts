/**
 * SSI values and `if` expressions as tables (`ngx_http_ssi_evaluate_string`,
 * `ngx_http_ssi_if`), the `echo` encodings and `$date_*` formats.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  cachedRegexes,
  escapeEntity,
  escapeUrl,
  evaluateIf,
  evaluateString,
  formatDate,
  REGEX_CACHE_SIZE,
} from "../../src/ssi/mod.ts";

const VARS: Record<string, string> = {
  a: "A",
  uri: "/x/y.html",
  empty: "",
  big: "b".repeat(100),
};
const lookup = (name: string) => VARS[name];

const STRINGS: [string, string, string | { error: string }][] = [
  ["plain", "abc", "abc"],
  ["a variable", "x$a", "xA"],
  ["braces", "${a}b", "Ab"],
  ["upper case names", "$A${A}", "AA"],
  ["an unknown variable is nothing", "[$nope]", "[]"],
  ["escapes with variables", "\\$a\\\\\\q\\'\\\"", "$a\\\\q'\""],
  ["escapes without variables", "\\q\\\\\\'", "\\q\\'"],
  ["a trailing backslash goes", "ab\\", "ab"],
  ["a name ends at other bytes", "$a.$a-", "A.A-"],
  ["$ alone", "$", { error: 'invalid variable name in "$"' }],
  ["$ before a non-name byte", "a$-b", {
    error: 'invalid variable name in "a$-b"',
  }],
  ["${ alone", "${", { error: 'invalid variable name in "${"' }],
  ["an unclosed brace", "${ab", {
    error: 'the closing bracket in "ab" variable is missing',
  }],
  ["a brace ended by another byte", "${a-b}", {
    error: 'the closing bracket in "a" variable is missing',
  }],
];

for (const [name, text, expected] of STRINGS) {
  Deno.test(`evaluateString(): ${name}`, () => {
    const result = evaluateString(text, lookup);
    deepStrictEqual(
      result.ok ? result.value : { error: result.message },
      expected,
    );
  });
}

Deno.test("evaluateString(): a value past the bound is an error", () => {
  deepStrictEqual(evaluateString("$big$big", lookup, 150), {
    ok: false,
    message: 'the value of "$big$big" exceeds 150 bytes',
  });
});

const EXPRESSIONS: [string, string, boolean | { error: string }][] = [
  ["a set variable", "$a", true],
  ["an empty variable", "$empty", false],
  ["an unknown variable", "$nope", false],
  ["empty", "", false],
  ["equal", "$a = A", true],
  ["equal, no spaces", "$a=A", true],
  ["not equal", "$a != A", false],
  ["the right side keeps trailing spaces", "$a = A ", false],
  ["quotes are text on both sides", '"$a" = "A"', true],
  ["quotes against none", '"$a" = A', false],
  ["the left side is folded to lower case", "$URI = \\/x/y.html", true],
  ["the right side is not", "$uri = \\/X/y.html", false],
  ["a regex", "$uri = /y\\.html\\$/", true],
  ["a regex that does not match", "$uri = /^y/", false],
  ["a negated regex", "$uri != /^y/", true],
  ["a regex needs its closing slash", "$uri = /y", {
    error: 'invalid expression in "$uri = /y"',
  }],
  ["\\/ starts a text", "$a = \\/A", false],
  ["an unknown operator", "$a ~ A", {
    error: 'invalid expression in "$a ~ A"',
  }],
  ["the message shows the folded side", "$A ~ A", {
    error: 'invalid expression in "$a ~ A"',
  }],
  ["a regex ending in $ names no variable", "$uri = /html$/", {
    error: 'invalid variable name in "html$"',
  }],
  // Only the backtracking engine runs these, out of the runtime's guard.
  ...[
    "x(?=y)",
    "x(?!y)",
    "(?<=x)y",
    "(?<!x)y",
    "(x)\\1",
    "(?<n>x)\\k<n>",
    "[a](?=b)",
  ].map((re): [string, string, { error: string }] => [
    `a regex with ${re} is refused`,
    `$uri = /${re}/`,
    {
      error: `pcre_compile() failed: lookarounds and backreferences ` +
        `are not run in SSI in "${re}"`,
    },
  ]),
  ["(?= in a class is text", "$uri = /[(?=]/", false],
  ["an escaped ( is text", "$uri = /\\(?=x/", false],
  ["a named group is run", "$uri = /(?<n>x)/", true],
];

for (const [name, expr, expected] of EXPRESSIONS) {
  Deno.test(`evaluateIf(): ${name}`, () => {
    const verdict = evaluateIf(expr, lookup);
    deepStrictEqual(
      verdict.ok ? verdict.value : { error: verdict.message },
      expected,
    );
  });
}

Deno.test("evaluateIf(): a match's captures, numbered and named", () => {
  deepStrictEqual(evaluateIf("$uri = /(x)\\/(z)?(?<file>y)/", lookup), {
    ok: true,
    value: true,
    captures: { groups: ["x/y", "x", "", "y"], named: { file: "y" } },
  });
  // PCRE counts groups up to the last one that took part.
  deepStrictEqual(evaluateIf("$uri = /(x)(q)?/", lookup), {
    ok: true,
    value: true,
    captures: { groups: ["x", "x"], named: {} },
  });
});

Deno.test("escapeUrl() and escapeEntity() escape as NGX_ESCAPE_HTML and ngx_escape_html", () => {
  const all = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
  const kept = [...escapeUrl(all).replace(/%[0-9A-F]{2}/g, "")].join("");
  strictEqual(
    kept,
    "!$&()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~",
  );
  strictEqual(escapeUrl("a b\u00e9"), "a%20b%E9");
  strictEqual(escapeEntity(`<&>"'`), "&lt;&amp;&gt;&quot;'");
});

Deno.test("formatDate(): strftime's conversions in the C locale", () => {
  const t = Date.UTC(2026, 0, 5, 13, 4, 9);
  const cases: [string, string][] = [
    ["%A, %d-%b-%Y %H:%M:%S %Z", "Monday, 05-Jan-2026 13:04:09 GMT"],
    ["%a %B %e %j %I%p %y %m %%", "Mon January  5 005 01PM 26 01 %"],
    ["%F %T %D %R %u %w", "2026-01-05 13:04:09 01/05/26 13:04 1 1"],
    ["%s", String(t / 1000)],
    ["%Q", "%Q"],
  ];
  for (const [format, expected] of cases) {
    strictEqual(formatDate(format, t, true), expected, format);
  }
  strictEqual(formatDate("", t, true), null);
  strictEqual(formatDate("x".repeat(2048), t, true), null);
});

Deno.test("evaluateIf(): the compiled regexes a body brings are bounded", () => {
  // Bounded: a body brings as many patterns as it has commands.
  for (let i = 0; i < REGEX_CACHE_SIZE * 4; i++) {
    const verdict = evaluateIf(`$uri = /^x${i}z/`, lookup);
    strictEqual(verdict.ok && verdict.value, false);
    ok(cachedRegexes() <= REGEX_CACHE_SIZE);
  }
  strictEqual(cachedRegexes(), REGEX_CACHE_SIZE);
});
