/** nginx's parser rules (ngx_conf_parse, ngx_conf_handler, ngx_conf_include). */
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { globRegExp } from "../../src/nginx_conf/glob.ts";
import { memoryIo } from "./_memory_io.ts";

const MAIN = "/n/conf/nginx.conf";

/**
 * A name relative to the main file's folder. On Windows an include joins
 * onto "\\n\\conf\\" (Windows separators, as nginx for Windows builds it).
 */
function relativeName(text: string): string {
  return text.replace(/\\n\\conf\\[^\s:]*/g, (p) => p.replaceAll("\\", "/"))
    .replaceAll("/n/conf/", "");
}

function names(files: Record<string, string>): string[] {
  const walk = (ds: ReturnType<typeof parseNginxConf>): string[] =>
    ds.flatMap((d) => [
      `${d.name}@${relativeName(d.file)}:${d.line}`,
      ...walk(d.block ?? []),
    ]);
  return walk(parseNginxConf(MAIN, memoryIo(files)));
}

function error(text: string, extra: Record<string, string> = {}): string {
  try {
    parseNginxConf(MAIN, memoryIo({ [MAIN]: text, ...extra }));
  } catch (e) {
    return relativeName((e as Error).message);
  }
  return "parsed";
}

Deno.test("parseNginxConf() reads include relative to the main file's folder", () => {
  deepStrictEqual(
    names({
      [MAIN]: "events {}\nhttp {\n include sites/a.conf;\n}\n",
      "/n/conf/sites/a.conf": "server {\n include snippets/x.inc;\n}\n",
      "/n/conf/snippets/x.inc": "\nlisten 80;\n",
    }),
    [
      "events@nginx.conf:1",
      "http@nginx.conf:2",
      "server@sites/a.conf:1",
      "listen@snippets/x.inc:2",
    ],
  );
});

Deno.test("parseNginxConf() expands an include glob in name order, without dot files", () => {
  deepStrictEqual(
    names({
      [MAIN]: "http { include conf.d/*.conf; include none/*.conf; }",
      "/n/conf/conf.d/b.conf": "gzip on;",
      "/n/conf/conf.d/a.conf": "sendfile on;",
      "/n/conf/conf.d/.hidden.conf": "bogus;",
      "/n/conf/conf.d/c.txt": "bogus;",
    }),
    ["http@nginx.conf:1", "sendfile@conf.d/a.conf:1", "gzip@conf.d/b.conf:1"],
  );
});

Deno.test("parseNginxConf() reports errors in an included file with its name", () => {
  strictEqual(
    error("http {\n include x.conf;\n}", { "/n/conf/x.conf": "a;\n}\n" }),
    'unknown directive "a" in x.conf:1',
  );
  strictEqual(
    error("http {\n include x.conf;\n}", { "/n/conf/x.conf": "gzip on;\n}\n" }),
    'unexpected "}" in x.conf:2',
  );
  strictEqual(
    error("http {\n\n include missing.conf;\n}"),
    Deno.build.os === "windows"
      ? 'CreateFile() "missing.conf" failed (2: The system cannot find the file specified) in nginx.conf:3'
      : 'open() "missing.conf" failed (2: No such file or directory) in nginx.conf:3',
  );
  strictEqual(
    error(`http { server {\n${"location / {".repeat(100)}`),
    "blocks nested deeper than 64 in nginx.conf:2",
  );
  strictEqual(
    error("include nginx.conf;"),
    "include nesting deeper than 16 files in nginx.conf:1",
  );
});

const ERRORS: [string, string][] = [
  [
    "http {\n server {\n }\n",
    'unexpected end of file, expecting "}" in nginx.conf:4',
  ],
  ["}", 'unexpected "}" in nginx.conf:1'],
  ["http { server; }", 'directive "server" has no opening "{" in nginx.conf:1'],
  [
    "http { server { listen 80 { } } }",
    'directive "listen" is not terminated by ";" in nginx.conf:1',
  ],
  [
    "http { root; }",
    'invalid number of arguments in "root" directive in nginx.conf:1',
  ],
  [
    "http { root a b; }",
    'invalid number of arguments in "root" directive in nginx.conf:1',
  ],
  [
    "http { sendfile yes; }",
    'invalid value "yes" in "sendfile" directive, it must be "on" or "off" in nginx.conf:1',
  ],
  [
    "http { root a;\n root b; }",
    '"root" directive is duplicate in nginx.conf:2',
  ],
  ["listen 80;", '"listen" directive is not allowed here in nginx.conf:1'],
  ["http { proxy_pas x; }", 'unknown directive "proxy_pas" in nginx.conf:1'],
  [
    "http { types { text/html html; x { } } }",
    'unexpected "{" in nginx.conf:1',
  ],
  [
    "http { include a b; }",
    'invalid number of arguments in "include" directive in nginx.conf:1',
  ],
];

for (const [text, message] of ERRORS) {
  Deno.test(`parseNginxConf() says ${message.replace(/ in nginx.conf.*/, "")} for ${JSON.stringify(text)}`, () => {
    strictEqual(error(text), message);
  });
}

Deno.test("parseNginxConf() keeps types {} entries and on/off in any case", () => {
  deepStrictEqual(
    names({ [MAIN]: "http { types { text/html html htm; } sendfile ON; }" }),
    [
      "http@nginx.conf:1",
      "types@nginx.conf:1",
      "text/html@nginx.conf:1",
      "sendfile@nginx.conf:1",
    ],
  );
});

Deno.test("globRegExp() matches as glob() does", () => {
  const cases: [string, string, boolean][] = [
    ["*.conf", "a.conf", true],
    ["*.conf", ".a.conf", false],
    ["*.conf", "a.confx", false],
    ["site?.conf", "site1.conf", true],
    ["site[0-9].conf", "site7.conf", true],
    ["site[!0-9].conf", "site7.conf", false],
    ["a.b", "axb", false],
  ];
  for (const [glob, name, expected] of cases) {
    strictEqual(globRegExp(glob).test(name), expected, `${glob} ${name}`);
  }
});

Deno.test("parseNginxConf() stops when its includes together pass 16 Mi characters", () => {
  const part = `# ${"x".repeat(4 * 1024 * 1024 - 4)}\n`;
  const files: Record<string, string> = { [MAIN]: "include parts/*.conf;\n" };
  for (let i = 0; i < 5; i++) files[`/n/conf/parts/${i}.conf`] = part;
  throws(
    () => parseNginxConf(MAIN, memoryIo(files)),
    /takes the configuration past 16777216 characters/,
  );
});
