/**
 * Which access logs make a request keep a copy of its fields past the
 * exchange, decided at load: only a format or an `if=` that reads a field
 * when the line is written (`$http_NAME` beyond `combined`'s two,
 * `$cookie_NAME`, `$content_type`, a `map` on one, however deep), never
 * one on `$status`, `$uri` or a `set` variable.
 */
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { compileText } from "../engine/_conf.ts";
import { varsWith } from "../_location_conf.ts";
import {
  READS_FIELDS,
  VARIABLES,
} from "../../src/engine/built_in_variables.ts";

function conf(http: string, log: string): string {
  return `http {
  map $status $loggable { ~^[23] 0; default 1; }
  map $http_x_forwarded_for $client { "" $remote_addr; default $http_x_forwarded_for; }
  map $client $client2 { default $client; }
  map $uri $by_uri { default 1; }
  ${http}
  server {
    listen 80;
    ${log}
    location / { set $x $http_a; return 204; }
  }
}`;
}

/** [format or if=, http lines, access_log line, the fields are copied]. */
const CASES: [string, string, string, boolean][] = [
  ["combined", "", "access_log logs/a.log;", false],
  [
    "if= on a map of $status",
    "",
    "access_log logs/a.log combined if=$loggable;",
    false,
  ],
  ["if= on $uri", "", "access_log logs/a.log combined if=$uri;", false],
  [
    "if= on a map of $uri",
    "",
    "access_log logs/a.log combined if=$by_uri;",
    false,
  ],
  ["if= on a set variable", "", "access_log logs/a.log combined if=$x;", false],
  [
    "a format of the record's values and combined's fields",
    "log_format f '$status $request_time $remote_user $http_referer $http_user_agent $upstream_http_x $sent_http_etag';",
    "access_log logs/a.log f;",
    false,
  ],
  [
    "if= on a field",
    "",
    "access_log logs/a.log combined if=$http_x_log;",
    true,
  ],
  ["if= on a cookie", "", "access_log logs/a.log combined if=$cookie_a;", true],
  [
    "if= on $content_type",
    "",
    "access_log logs/a.log combined if=$content_type;",
    true,
  ],
  [
    "if= on a map of a field",
    "",
    "access_log logs/a.log combined if=$client;",
    true,
  ],
  [
    "if= on a map of a map of a field",
    "",
    "access_log logs/a.log combined if=${client2}x;",
    true,
  ],
  [
    "a format with a field",
    "log_format f '$status $http_x_id';",
    "access_log logs/a.log f;",
    true,
  ],
  [
    "a format with a map of a field",
    "log_format f '$client2';",
    "access_log logs/a.log f;",
    true,
  ],
];

Deno.test("an access log keeps the request's fields only when its format or if= reads one", async (t) => {
  for (const [name, http, log, copies] of CASES) {
    await t.step(name, () => {
      strictEqual(compileText(conf(http, log)).accessCopiesFields, copies);
    });
  }
});

Deno.test("READS_FIELDS names every built-in variable that reads the request's fields", () => {
  const gone = () => {
    throw new TypeError("Request closed");
  };
  const closed = { get: gone, has: gone, forEach: gone } as unknown as Headers;
  const reading: string[] = [];
  for (const [name, read] of Object.entries(VARIABLES)) {
    const r = varsWith({ headers: closed, fields: null });
    try {
      read(r);
    } catch {
      reading.push(name);
    }
  }
  deepStrictEqual(reading.sort(), [...READS_FIELDS].sort());
  throws(() => closed.get("x"));
});

/** [format or if=, http lines, access_log line, the request is counted]. */
const COUNTED: [string, string, string, boolean][] = [
  ["combined", "", "access_log logs/a.log;", false],
  ["access_log off", "", "access_log off;", false],
  [
    "a format without it",
    "log_format f '$status $bytes_sent $body_bytes_sent';",
    "access_log logs/a.log f;",
    false,
  ],
  [
    "a format with it",
    "log_format f '$status ${request_length}';",
    "access_log logs/a.log f;",
    true,
  ],
  [
    "if= on it",
    "",
    "access_log logs/a.log combined if=$request_length;",
    true,
  ],
];

Deno.test("a request keeps its head's lines and counts its body only when a format or if= names $request_length", async (t) => {
  for (const [name, http, log, counted] of COUNTED) {
    await t.step(name, () => {
      strictEqual(compileText(conf(http, log)).accessCountsRequest, counted);
    });
  }
});
