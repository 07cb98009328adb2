/**
 * Host names and `map` keys beside nginx 1.22 on the same nginx.conf:
 * `server_name` wildcards (`*.x` takes subdomains only, `.x` the name too,
 * `www.x.*`, and nginx's order), a map's exact keys in any case, its
 * `hostnames` wildcards, a map regex's captures left as the request's
 * `$1` (ngx_http_regex_exec), named captures of every regex nginx
 * registers names from (`server_name`, map keys, `proxy_redirect`,
 * `proxy_cookie_*`), and `expires` with a variable (the stock
 * `map $sent_http_content_type $expires` idiom).
 */
import { deepStrictEqual } from "node:assert/strict";
import { rawRequest } from "../_utils.ts";
import { bothSides, bothSidesAhead, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("nginx_conf/names_and_maps_nginx_test.ts", ["nginx"]);

/** Server names, map keys, a map regex's captures. */
function namesConf(port: number): string {
  const listen = `listen 127.0.0.1:${port}`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  map $arg_k $m { Foo exact; default d; }
  map $http_host $h { EX.ORG exact; default d; }
  map $http_x $hn {
    hostnames;
    *.ex.com sub;
    .ex.net both;
    www.ex.* tail;
    *.a.ex.com deeper;
    ex.org exact;
    default d;
  }
  map $http_x $plain { *.ex.com star; default d; }
  map $http_x $m2 { "~^(.)(.*)$" "$2$1"; }
  server {
    ${listen} default_server;
    server_name default;
    location / { return 200 "default"; }
    location = /maps { return 200 "m=$m h=$h hn=$hn plain=$plain"; }
    location ~ ^/mm(.*) { return 200 "$m2 1=$1"; }
  }
  server { ${listen}; server_name *.wild.com; return 200 "star"; }
  server { ${listen}; server_name .both.com; return 200 "both"; }
  server { ${listen}; server_name www.tail.*; return 200 "tail"; }
  server { ${listen}; server_name *.x.both.com; return 200 "x.both"; }
  server { ${listen}; server_name exact.wild.com; return 200 "exact"; }
  server { ${listen}; server_name ~^www\\.; return 200 "regex"; }
}
`;
}

/** Named captures outside locations, and `expires` with a variable. */
function capturesConf(port: number): string {
  const listen = `listen 127.0.0.1:${port}`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  types { text/html html; image/png png; text/plain txt; }
  map $http_x $named { "~^(?<first>.)" "$first"; default none; }
  map $sent_http_content_type $expires {
    default off;
    text/html epoch;
    ~image/ max;
  }
  map $sent_http_content_type $expm { default off; text/plain 1h; }
  server {
    ${listen} default_server;
    server_name default;
    root html;
    location = /named { return 200 "$named first=$first"; }
    location /exp/ { expires $expires; }
    location /expm/ { expires modified $expm; }
    location /cookies/ {
      proxy_pass http://127.0.0.1:9;
      proxy_redirect ~^(?<rd>.*)$ $rd;
      proxy_cookie_domain ~^(?<cd>.+)$ $cd;
      proxy_cookie_path ~^(?<cp>.*)$ $cp;
    }
  }
  server {
    ${listen};
    server_name ~^(?<sub>[a-z]+)\\.ex\\.com$;
    root html/$sub;
    location = /sub { return 200 "sub=$sub"; }
  }
}
`;
}

/** Each side's files: pages for `expires` and a folder per name. */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/exp`, { recursive: true });
  Deno.mkdirSync(`${prefix}/html/expm`, { recursive: true });
  Deno.mkdirSync(`${prefix}/html/abc`, { recursive: true });
  for (const dir of ["exp", "expm"]) {
    for (const name of ["a.html", "b.png", "c.txt"]) {
      Deno.writeTextFileSync(`${prefix}/html/${dir}/${name}`, "x");
      // A fixed Last-Modified, so `modified` gives a fixed date.
      Deno.utimeSync(`${prefix}/html/${dir}/${name}`, 1e9, 1e9);
    }
  }
  Deno.writeTextFileSync(`${prefix}/html/abc/i.txt`, "abc's");
}
bothSidesAhead(prepare);

/** [Host, path, X field] */
const NAMES: [string, string, string][] = [
  // server_name
  ["wild.com", "/", ""],
  ["wild.com.", "/", ""],
  ["a.wild.com", "/", ""],
  ["exact.wild.com", "/", ""],
  ["both.com", "/", ""],
  ["both.com.", "/", ""],
  ["a.both.com", "/", ""],
  ["x.both.com", "/", ""],
  ["y.x.both.com", "/", ""],
  ["www.tail.org", "/", ""],
  ["www.tail.co.uk", "/", ""],
  ["www.tail", "/", ""],
  ["www.other.org", "/", ""],
  ["WWW.TAIL.ORG", "/", ""],
  // map keys in any case, hostnames
  ["default", "/maps?k=foo", ""],
  ["default", "/maps?k=FOO", ""],
  ["default", "/maps?k=Foo", ""],
  ["EX.ORG", "/maps", ""],
  ["default", "/maps", "a.ex.com"],
  ["default", "/maps", "b.a.ex.com"],
  ["default", "/maps", "a.ex.com."],
  ["default", "/maps", "ex.com"],
  ["default", "/maps", "ex.net"],
  ["default", "/maps", "EX.NET"],
  ["default", "/maps", "z.ex.net"],
  ["default", "/maps", "www.ex.org"],
  ["default", "/maps", "www.ex"],
  ["default", "/maps", "ex.org."],
  ["default", "/maps", "*.ex.com"],
  // a map regex's captures become the request's
  ["default", "/mmQ", "hello"],
  ["default", "/mmQ", ""],
];

/** [Host, path, X field] */
const CAPTURES: [string, string, string][] = [
  ["default", "/named", "zed"],
  ["default", "/named", ""],
  // named captures of server_name
  ["abc.ex.com", "/sub", ""],
  ["abc.ex.com", "/i.txt", ""],
  // expires with a variable
  ["default", "/exp/a.html", ""],
  ["default", "/exp/b.png", ""],
  ["default", "/exp/c.txt", ""],
  ["default", "/expm/a.html", ""],
  ["default", "/expm/b.png", ""],
  ["default", "/expm/c.txt", ""],
];

/** The status line, `Expires` and `Cache-Control`, and the body. */
async function answer(
  port: number,
  [host, path, x]: [string, string, string],
): Promise<string> {
  const raw = await rawRequest(
    port,
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${
      x === "" ? "" : `X: ${x}\r\n`
    }Connection: close\r\n\r\n`,
  );
  const end = raw.indexOf("\r\n\r\n");
  const lines = raw.slice(0, end).split("\r\n");
  const kept = lines.filter((l) => /^(expires|cache-control):/i.test(l))
    .map((l) => l.toLowerCase());
  return [lines[0], ...kept, raw.slice(end + 4)].join(" | ");
}

/** Each request's answer from each side, as lines to compare. */
async function bothAnswers(
  conf: (port: number) => string,
  requests: readonly [string, string, string][],
  options: { prepare?: (prefix: string) => void } = {},
): Promise<{ ours: string[]; theirs: string[] }> {
  await using both = await bothSides(conf, options);
  const theirs: string[] = [];
  const ours: string[] = [];
  for (const request of requests) {
    const label = request.join(" ");
    theirs.push(`${label} => ${await answer(both.nginx.port, request)}`);
    ours.push(`${label} => ${await answer(both.gateway.port, request)}`);
  }
  return { ours, theirs };
}

Deno.test(
  "server_name wildcards, map keys in any case, hostnames maps, a map regex's captures: as nginx 1.22",
  NEEDS,
  async () => {
    const { ours, theirs } = await bothAnswers(namesConf, NAMES);
    deepStrictEqual(ours, theirs);
  },
);

Deno.test(
  "named captures of server_name, map and proxy regexes, and expires $variable: as nginx 1.22",
  NEEDS,
  async () => {
    const { ours, theirs } = await bothAnswers(capturesConf, CAPTURES, {
      prepare,
    });
    deepStrictEqual(ours, theirs);
  },
);

/**
 * Regex server names against the host nginx lower-cases: a pattern is
 * caseless only when its text holds an upper-case letter
 * (ngx_http_core_server_name), so `[[:upper:]]` or `\x41` in one without
 * such a letter never matches, and `(?-i)` after one turns it off again.
 */
function regexNamesConf(port: number): string {
  const listen = `listen 127.0.0.1:${port}`;
  const named = (name: string, body: string) =>
    `  server { ${listen}; server_name "${name}"; return 200 "${body}"; }\n`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server { ${listen} default_server; server_name default; return 200 "default"; }
${named("~^[[:upper:]]+\\\\.up\\\\.com$", "up")}${
    named("~^\\\\x41bc\\\\.hex\\\\.com$", "hex")
  }${named("~^[\\\\x41-\\\\x5a]+\\\\.range\\\\.com$", "range")}${
    named("~^WWW\\\\.Upper\\\\.com$", "upper")
  }${named("~^(?-i)Mix\\\\.com$", "mix")}${named("~^(?i)cap\\\\.com$", "cap")}${
    named("~^[^A]+\\\\.neg\\\\.com$", "neg")
  }${named("~^[^a]+\\\\.neg2\\\\.com$", "neg2")}${
    named("~^(?<sub>[a-z]+)\\\\.Sub\\\\.com$", "sub=$sub")
  }${named("~^(?<low>[a-z]+)\\\\.low\\\\.com$", "low=$low")}}
`;
}

const REGEX_NAMES: [string, string, string][] = [
  "ABC.up.com",
  "abc.up.com",
  "abc.hex.com",
  "Abc.hex.com",
  "ABC.range.com",
  "abc.range.com",
  "WWW.UPPER.COM",
  "www.upper.com",
  "mix.com",
  "Mix.com",
  "CAP.com",
  "a.neg.com",
  "b.neg.com",
  "A.neg2.com",
  "B.neg2.com",
  "ABC.sub.com",
  "Abc.LOW.com",
].map((host) => [host, "/", ""]);

Deno.test(
  "regex server names match the lower-cased host caseless only when their text holds an upper-case letter, as nginx 1.22",
  NEEDS,
  async () => {
    const { ours, theirs } = await bothAnswers(regexNamesConf, REGEX_NAMES);
    deepStrictEqual(ours, theirs);
  },
);
