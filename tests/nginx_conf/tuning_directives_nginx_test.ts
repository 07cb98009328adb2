/**
 * Directives nginx 1.22 accepts that only size its hashes or tune what the
 * gateway has no counterpart for: `--check` takes the values `nginx -t`
 * takes and refuses the others with nginx's words; those whose behaviour
 * the gateway does not reproduce are refused with what to do instead.
 * `--check` names every refused directive of a file in one run, where
 * nginx stops at the first. `max_ranges`, `split_clients` and
 * `valid_referers` are run beside nginx.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { bothSides, bothSidesAhead, PROCESS, TEMP } from "../_same_conf.ts";
import { rawRequest } from "../_utils.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("nginx_conf/tuning_directives_nginx_test.ts", [
  "nginx",
]);

type Level = "http" | "server" | "location" | "upstream";

/** A file with `line` at `level`. */
function fileWith(level: Level, line: string): string {
  const at = (l: Level) => l === level ? ` ${line}` : "";
  return `events {}
http {${at("http")}
  upstream u { server 127.0.0.1:1;${at("upstream")} }
  server {
    listen 127.0.0.1:1;${at("server")}
    location / { proxy_pass http://u;${at("location")} }
  }
}
`;
}

/**
 * [level, line, the gateway's refusal where nginx takes it]: every other
 * row says what nginx says (nothing, or its `[emerg]`).
 */
const ROWS: [Level, string, string?][] = [
  ["http", "map_hash_bucket_size 64;"],
  ["http", "map_hash_bucket_size 64k;"],
  ["http", "map_hash_max_size 2048;"],
  ["http", "map_hash_max_size x;"],
  ["http", "variables_hash_bucket_size 128;"],
  ["http", "variables_hash_bucket_size 1z;"],
  ["http", "variables_hash_max_size 1024;"],
  ["server", "variables_hash_max_size 1024;"],
  ["http", "proxy_headers_hash_bucket_size 128;"],
  ["location", "proxy_headers_hash_max_size 1k;"],
  ["location", "proxy_headers_hash_max_size 512;"],
  ["http", "server_names_hash_bucket_size 64k;"],
  ["http", "types_hash_max_size 1k;"],
  ["http", "open_log_file_cache off;"],
  ["server", "open_log_file_cache max=10 inactive=20s min_uses=2 valid=1m;"],
  ["location", "open_log_file_cache inactive=20s;"],
  ["http", "open_log_file_cache max=0;"],
  ["http", "open_log_file_cache max=x;"],
  ["http", "open_log_file_cache foo;"],
  ["http", "open_log_file_cache off max=1;"],
  ["http", "open_log_file_cache off foo;"],
  ["http", "open_log_file_cache max=1 inactive=5ms;"],
  ["http", "open_log_file_cache max=1 min_uses=x;"],
  ["http", "open_log_file_cache max=1 2 3 4 5;"],
  ["http", "resolver_timeout 5s;"],
  ["location", "resolver_timeout x;"],
  ["http", "send_lowat x;"],
  ["http", "keepalive_disable none;"],
  ["server", "keepalive_disable MSIE6 safari;"],
  ["http", "keepalive_disable foo;"],
  ["http", "proxy_socket_keepalive on;"],
  ["http", "proxy_socket_keepalive yes;"],
  ["http", "msie_padding off;"],
  ["http", "msie_refresh off;"],
  ["http", "log_subrequest off;"],
  [
    "http",
    "log_subrequest on;",
    '"log_subrequest on" is not supported: the gateway behaves as "log_subrequest off"',
  ],
  ["upstream", "zone z 64k;"],
  ["upstream", "zone z 1k;"],
  ["upstream", "zone z x;"],
  ["upstream", "zone z 64k 1;"],
  ["upstream", "keepalive_time 1h;"],
  ["upstream", "keepalive_time x;"],
  ["location", "max_ranges 1;"],
  ["location", "max_ranges x;"],
  ["location", "max_ranges -1;"],
  ["http", "proxy_ignore_client_abort off;"],
  [
    "location",
    "proxy_ignore_client_abort on;",
    '"proxy_ignore_client_abort on" is not supported: the gateway behaves as "proxy_ignore_client_abort off"',
  ],
  [
    "location",
    "limit_rate 1k;",
    `"limit_rate" is not supported: the gateway does not limit a response's rate; remove it ("limit_req" and "limit_conn" bound requests and connections)`,
  ],
  [
    "server",
    "limit_rate_after 1m;",
    `"limit_rate_after" is not supported: the gateway does not limit a response's rate; remove it ("limit_req" and "limit_conn" bound requests and connections)`,
  ],
  [
    "location",
    "keepalive_time 1h;",
    `"keepalive_time" is not supported: the runtime keeps a client connection open until the client closes it; remove it ("keepalive_requests" is ignored too)`,
  ],
  ["http", "split_clients $remote_addr $variant { 50% a; * b; }"],
  ["http", "split_clients $remote_addr $variant { 50 a; * b; }"],
  ["http", "split_clients $remote_addr $variant { 0% a; * b; }"],
  ["http", "split_clients $remote_addr $variant { 0.555% a; * b; }"],
  ["http", "split_clients $remote_addr $variant { 0.5.5% a; }"],
  ["http", "split_clients $remote_addr $variant { 60% a; 50% b; }"],
  ["http", "split_clients $remote_addr $variant { * a; 10% b; }"],
  ["http", "split_clients $remote_addr variant { 10% a; }"],
  ["http", "split_clients $remote_addr $variant { }"],
  ["location", "valid_referers none server_names;"],
  ["location", "valid_referers none;"],
  ["server", "valid_referers blocked ~foo;"],
  ["location", "valid_referers a..b;"],
  ["location", "valid_referers ~;"],
  ["location", 'valid_referers "";'],
  ["location", "valid_referers *.a.com *.a.com;"],
  [
    "location",
    "disable_symlinks on;",
    `"disable_symlinks" is not supported: the gateway serves a link only when its target stays inside the folder the location serves; remove it`,
  ],
  [
    "location",
    "auth_delay 1s;",
    `"auth_delay" is not supported: the gateway answers a failed password check at once; remove it ("limit_req" slows repeated tries)`,
  ],
  [
    "location",
    "add_trailer X-T v;",
    `"add_trailer" is not supported: the gateway sends no trailers; use "add_header"`,
  ],
  [
    "location",
    "mirror /m;",
    `"mirror" is not supported: the gateway sends no mirror subrequests; remove it`,
  ],
];

/** nginx's `[emerg]` text without its time, pid and place; `""` for none. */
function emergOf(stderr: string): string {
  return /\[emerg\] (?:\d+#\d+: )?(.*?)(?: in \/\S+:\d+)?$/m.exec(stderr)
    ?.[1] ?? "";
}

/** The gateway's first refusal of a file, without its place; `""` for none. */
function ours(conf: string): string {
  const result = loadNginxConf(conf);
  return result.ok ? "" : result.message.replace(/ in \/\S+:\d+$/, "");
}

Deno.test(
  "--check takes the values of hash sizes and tuning directives nginx 1.22 takes, refuses the others with its words, and names what to do for the ones it does not reproduce",
  NEEDS,
  async () => {
    await using p = await nginxPrefix("", { name: "tuning-", dirs: ["logs"] });
    const theirs: string[] = [];
    const mine: string[] = [];
    for (const [level, line, differs] of ROWS) {
      await Deno.writeTextFile(p.conf, fileWith(level, line));
      const nginx = emergOf(
        await nginxTestOutput({ prefix: p.prefix, conf: p.conf }),
      );
      theirs.push(`${level} ${line} => ${differs ?? nginx}`);
      mine.push(`${level} ${line} => ${ours(p.conf)}`);
    }
    deepStrictEqual(mine, theirs);
  },
);

Deno.test(
  "--check names every unknown, misplaced and refused directive of a file in one run; the first is nginx's",
  NEEDS,
  async () => {
    const text = `events {}
http {
  map_hash_bucket_size 64;
  server {
    listen 127.0.0.1:1;
    foo_bar 1;
    location / {
      baz { x; }
      mirror /m;
      root html;
    }
    limit_rate 10k;
    variables_hash_max_size 1;
    gzip maybe;
    qux;
  }
}
`;
    await using p = await nginxPrefix(text, {
      name: "check-all-",
      dirs: ["logs"],
    });
    const file = p.conf;
    const result = loadNginxConf(file);
    const refused = result.ok ? [] : result.errors ?? [result.message];
    deepStrictEqual(refused, [
      `unknown directive "foo_bar" in ${file}:6`,
      `unknown directive "baz" in ${file}:8`,
      `"mirror" is not supported: the gateway sends no mirror subrequests; remove it in ${file}:9`,
      `"limit_rate" is not supported: the gateway does not limit a response's rate; remove it ("limit_req" and "limit_conn" bound requests and connections) in ${file}:12`,
      `"variables_hash_max_size" directive is not allowed here in ${file}:13`,
      `invalid value "maybe" in "gzip" directive, it must be "on" or "off" in ${file}:14`,
      `unknown directive "qux" in ${file}:15`,
    ]);
    const nginx = await nginxTestOutput({ prefix: p.prefix, conf: file });
    deepStrictEqual(
      /\[emerg\] (?:\d+#\d+: )?(.*)$/m.exec(nginx)?.[1],
      refused[0],
    );
  },
);

/**
 * `upstream {}` blocks' `zone`s: blocks may share one, one of them giving
 * its size; a zone no block sizes is refused when nginx starts (its
 * `[emerg]` names no place).
 */
const ZONE_ROWS: string[] = [
  "upstream u { zone z; server 127.0.0.1:1; }",
  "upstream u { zone z; server 127.0.0.1:1; } upstream v { zone z 64k; server 127.0.0.1:1; }",
  "upstream v { zone z 64k; server 127.0.0.1:1; } upstream u { zone z; server 127.0.0.1:1; }",
  "upstream v { zone z 64k; server 127.0.0.1:1; } upstream u { zone z 128k; server 127.0.0.1:1; }",
  "upstream v { zone z 64k; server 127.0.0.1:1; } upstream u { zone z 64k; server 127.0.0.1:1; }",
  "upstream u { zone z 64k; server 127.0.0.1:1; } upstream v { zone Z; server 127.0.0.1:1; }",
  "upstream u { zone z; zone y 64k; server 127.0.0.1:1; }",
  "upstream u { zone z; server 127.0.0.1:1; } upstream v { zone y 64k; server 127.0.0.1:1; }",
  "upstream u { zone z 1k; server 127.0.0.1:1; }",
];

Deno.test(
  "an upstream zone without a size is refused unless another block gives it one, and sizes must agree, as nginx 1.22",
  NEEDS,
  async () => {
    await using p = await nginxPrefix("", { name: "zones-", dirs: ["logs"] });
    const theirs: string[] = [];
    const mine: string[] = [];
    for (const upstreams of ZONE_ROWS) {
      await Deno.writeTextFile(
        p.conf,
        `events {}
http {
  ${upstreams}
  server { listen 127.0.0.1:1; location / { proxy_pass http://u; } }
}
`,
      );
      const nginx = emergOf(
        await nginxTestOutput({ prefix: p.prefix, conf: p.conf }),
      );
      theirs.push(`${upstreams} => ${nginx}`);
      // A refusal nginx makes when it starts is placed in the file.
      mine.push(
        `${upstreams} => ${ours(p.conf).replace(/ in \/\S+$/, "")}`,
      );
    }
    deepStrictEqual(mine, theirs);
  },
);

/** `max_ranges` beside nginx: 0 answers no range and no Accept-Ranges. */
function rangesConf(port: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    root html;
    location /none/ { max_ranges 0; }
    location /one/ { max_ranges 1; }
    location /any/ { }
  }
}
`;
}

function prepareRanges(prefix: string): void {
  for (const dir of ["none", "one", "any"]) {
    Deno.mkdirSync(join(prefix, "html", dir), { recursive: true });
    Deno.writeTextFileSync(join(prefix, "html", dir, "f.txt"), "0123456789");
  }
}
bothSidesAhead(prepareRanges);

Deno.test(
  "max_ranges: 0 answers no range and sends no Accept-Ranges, 1 one range, as nginx 1.22",
  NEEDS,
  async () => {
    await using both = await bothSides(rangesConf, { prepare: prepareRanges });
    const answers = async (port: number) => {
      const out: string[] = [];
      for (const dir of ["none", "one", "any"]) {
        for (const range of ["", "bytes=2-4", "bytes=0-0,2-3"]) {
          const raw = await rawRequest(
            port,
            `GET /${dir}/f.txt HTTP/1.1\r\nHost: t\r\n${
              range === "" ? "" : `Range: ${range}\r\n`
            }Connection: close\r\n\r\n`,
          );
          const end = raw.indexOf("\r\n\r\n");
          const lines = raw.slice(0, end).split("\r\n");
          const kept = lines.filter((l) =>
            /^(accept-ranges|content-range):/i.test(l)
          ).map((l) => l.toLowerCase());
          out.push(`${dir} ${range} => ${[lines[0], ...kept].join(" | ")}`);
        }
      }
      return out;
    };
    const theirs = await answers(both.nginx.port);
    // Several ranges: nginx's multipart/byteranges, the gateway's whole file
    // (README, multi-range).
    const multi = (l: string) => l.startsWith("any bytes=0-0,2-3");
    deepStrictEqual(
      (await answers(both.gateway.port)).filter((l) => !multi(l)),
      theirs.filter((l) => !multi(l)),
    );
  },
);

/** `split_clients` beside nginx: each source's variant. */
function splitConf(port: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  split_clients "\${arg_k}salt" $variant {
    0.5% a;
    20% b;
    30.25% c;
    * d;
  }
  split_clients $arg_k $partial { 10% x; 5.5% y; }
  server {
    listen 127.0.0.1:${port};
    location / { return 200 "$variant $partial"; }
  }
}
`;
}

Deno.test(
  "split_clients: the variant nginx 1.22 gives each source (MurmurHash2, percent ranges, * the rest, none past the last)",
  NEEDS,
  async () => {
    await using both = await bothSides(splitConf);
    const sources = [
      ...Array.from({ length: 200 }, (_, i) => String(i)),
      "",
      "ab",
      "abc",
      "abcd",
      "abcde",
      "%C3%A9t%C3%A9",
    ];
    const answers = async (port: number) => {
      const out: string[] = [];
      for (const k of sources) {
        const raw = await rawRequest(
          port,
          `GET /?k=${k} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
        );
        out.push(`${k} => ${raw.slice(raw.indexOf("\r\n\r\n") + 4)}`);
      }
      return out;
    };
    deepStrictEqual(
      await answers(both.gateway.port),
      await answers(both.nginx.port),
    );
  },
);

/** `valid_referers` beside nginx: `$invalid_referer` for each field. */
function referersConf(port: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name site.org ~^re\\d+\\.com$;
    valid_referers none blocked server_names *.ex.com ex.org/gal/ www.ex.*
      ~\\.EX\\.net/x;
    location / { return 200 "r=$invalid_referer"; }
    location /strict/ {
      valid_referers ex.org;
      return 200 "r=$invalid_referer";
    }
    location /none/ {
      valid_referers none;
      valid_referers ex.org;
      return 200 "r=$invalid_referer";
    }
  }
  server {
    listen 127.0.0.1:${port};
    server_name other;
    return 200 "r=$invalid_referer";
  }
}
`;
}

Deno.test(
  "valid_referers: $invalid_referer as nginx 1.22 sets it",
  NEEDS,
  async () => {
    await using both = await bothSides(referersConf);
    const fields = [
      null,
      "",
      "x",
      "ftp://ex.org/gal/",
      "http://ex.org",
      "http://ex.org/gal/a.jpg",
      "http://EX.ORG/gal/",
      "http://ex.org/other/",
      "http://ex.org:8080/gal/x",
      "https://a.ex.com/",
      "http://ex.com/",
      "http://www.ex.co.uk/",
      "http://site.org/",
      "http://re12.com/p",
      "http://re.com/p",
      "http://a.ex.net/x/y",
      "http://a.ex.net/y",
      "HTTP://SITE.ORG/",
      "http://i.ru",
      "http:/site.org",
    ];
    const answers = async (port: number) => {
      const out: string[] = [];
      for (const path of ["/", "/strict/", "/none/"]) {
        for (const host of ["t", "other"]) {
          if (host === "other" && path !== "/") continue;
          for (const field of fields) {
            const raw = await rawRequest(
              port,
              `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${
                field === null ? "" : `Referer: ${field}\r\n`
              }Connection: close\r\n\r\n`,
            );
            out.push(
              `${host}${path} ${field} => ${
                raw.slice(raw.indexOf("\r\n\r\n") + 4)
              }`,
            );
          }
        }
      }
      return out;
    };
    deepStrictEqual(
      await answers(both.gateway.port),
      await answers(both.nginx.port),
    );
  },
);
