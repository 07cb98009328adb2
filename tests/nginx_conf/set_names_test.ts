/**
 * Which names `set` may assign, as nginx 1.22 decides at load: a built-in
 * variable nginx keeps read-only is its `the duplicate "NAME" variable`
 * (the name as written), whichever of the engine's tables or the log
 * phase's it is read from; a changeable one (`$ssl_*`) and a prefix
 * name (`$http_x`) are assigned; the changeable ones whose own handler the
 * gateway lacks are refused as not supported. A regex's named capture
 * (`(?<uri>…)`) and a `map`, `geo` or `split_clients` variable are
 * variables nginx adds too: the same names are refused, the changeable
 * ones taken. Checked against nginx itself.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { refusals } from "../engine/_conf.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";

/** [name as written, what nginx 1.22 says, what the gateway says when it differs] */
const NAMES: [string, string, string?][] = [
  ["remote_addr", 'the duplicate "remote_addr" variable'],
  ["Remote_Addr", 'the duplicate "Remote_Addr" variable'],
  ["uri", 'the duplicate "uri" variable'],
  ["query_string", 'the duplicate "query_string" variable'],
  ["request_id", 'the duplicate "request_id" variable'],
  ["date_local", 'the duplicate "date_local" variable'],
  // Names only the engine's not-found readers knew, and the log phase's.
  ["request_body", 'the duplicate "request_body" variable'],
  ["gzip_ratio", 'the duplicate "gzip_ratio" variable'],
  ["upstream_cache_status", 'the duplicate "upstream_cache_status" variable'],
  ["connections_active", 'the duplicate "connections_active" variable'],
  ["status", 'the duplicate "status" variable'],
  ["body_bytes_sent", 'the duplicate "body_bytes_sent" variable'],
  ["upstream_addr", 'the duplicate "upstream_addr" variable'],
  ["time_local", 'the duplicate "time_local" variable'],
  // Field variables the core registers by name (the rest are a prefix's).
  ["http_host", 'the duplicate "http_host" variable'],
  ["HTTP_Via", 'the duplicate "HTTP_Via" variable'],
  ["http_x_forwarded_for", 'the duplicate "http_x_forwarded_for" variable'],
  ["http_cookie", 'the duplicate "http_cookie" variable'],
  ["sent_http_content_type", 'the duplicate "sent_http_content_type" variable'],
  ["sent_http_link", 'the duplicate "sent_http_link" variable'],
  // Changeable (NGX_HTTP_VAR_CHANGEABLE), and names of a prefix.
  ["ssl_protocol", ""],
  ["invalid_referer", ""],
  ["http_x_user", ""],
  ["arg_page", ""],
  ["cookie_sid", ""],
  ["sent_http_x", ""],
  ["upstream_http_x", ""],
  ["my_var", ""],
  // Changeable in nginx, whose own handler the gateway lacks.
  [
    "args",
    "",
    `"set $args" is not supported: the gateway does not change a request's arguments this way; use "rewrite" with "?" arguments`,
  ],
  [
    "limit_rate",
    "",
    `"set $limit_rate" is not supported: the gateway does not limit a response's rate`,
  ],
];

function conf(name: string, listen = "127.0.0.1:80"): string {
  return `http {
  server {
    listen ${listen};
    location / { set $${name} 1; return 204; }
  }
}`;
}

Deno.test("set refuses the names nginx 1.22 keeps read-only with its message, and assigns the others", async (t) => {
  for (const [name, theirs, differs] of NAMES) {
    const ours = differs ?? theirs;
    await t.step(`set $${name}`, () => {
      deepStrictEqual(
        refusals(conf(name)).map((e) => e.replace(/ in \/n\/.*$/, "")),
        ours === "" ? [] : [ours],
      );
    });
  }
});

Deno.test("the names set may assign are nginx 1.22's", async () => {
  await using p = await nginxPrefix("", { name: "set-names-", dirs: ["logs"] });
  for (const [name, expected] of NAMES) {
    const file = join(p.prefix, "nginx.conf");
    await Deno.writeTextFile(
      file,
      `events {}\n${conf(name, "127.0.0.1:1")}`,
    );
    const text = await nginxTestOutput({ prefix: p.prefix, conf: file });
    deepStrictEqual(
      /\[emerg\] (?:\d+#\d+: )?(.*) in \//.exec(text)?.[1] ?? "",
      expected,
      name,
    );
  }
});

/** A location whose regex captures `name`. */
function captureConf(name: string): string {
  return `http {
  server {
    listen 127.0.0.1:1;
    location ~ "^/(?<${name}>.*)$" { return 204; }
  }
}`;
}

Deno.test("a regex's named capture takes the names nginx 1.22 lets it take, and is refused for the others with its message", async () => {
  await using p = await nginxPrefix("", {
    name: "capture-names-",
    dirs: ["logs"],
  });
  const theirs: string[] = [];
  const ours: string[] = [];
  for (const [name] of NAMES) {
    await Deno.writeTextFile(p.conf, `events {}\n${captureConf(name)}`);
    const text = await nginxTestOutput({ prefix: p.prefix, conf: p.conf });
    theirs.push(
      `${name}: ${/\[emerg\] (?:\d+#\d+: )?(.*) in \//.exec(text)?.[1] ?? ""}`,
    );
    ours.push(
      `${name}: ${
        refusals(captureConf(name)).map((e) => e.replace(/ in \/n\/.*$/, ""))
          .join("; ")
      }`,
    );
  }
  deepStrictEqual(ours, theirs);
});

/** `http` lines that declare variables, and a map's second default. */
const DECLARED: string[] = [
  ...NAMES.map(([name]) => `map $host $${name} { a 1; }`),
  "geo $uri { default 1; }",
  "geo $remote_addr $Host { default 1; }",
  "geo $g { default 1; }",
  "split_clients $host $uri { 50% a; * b; }",
  "split_clients $host $s { 50% a; * b; }",
  "map $host $m { default 1; default 2; }",
  "map $host $m { default 1; a 2; }",
];

Deno.test("map, geo and split_clients take the variable names nginx 1.22 lets them take, and one default a map", async () => {
  await using p = await nginxPrefix("", {
    name: "declared-names-",
    dirs: ["logs"],
  });
  const theirs: string[] = [];
  const ours: string[] = [];
  for (const line of DECLARED) {
    const http = `http {
  ${line}
  server { listen 127.0.0.1:1; }
}`;
    await Deno.writeTextFile(p.conf, `events {}\n${http}`);
    const text = await nginxTestOutput({ prefix: p.prefix, conf: p.conf });
    theirs.push(
      `${line}: ${/\[emerg\] (?:\d+#\d+: )?(.*) in \//.exec(text)?.[1] ?? ""}`,
    );
    ours.push(
      `${line}: ${
        refusals(http).map((e) => e.replace(/ in \/n\/.*$/, "")).join("; ")
      }`,
    );
  }
  deepStrictEqual(ours, theirs);
});
