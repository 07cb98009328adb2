/**
 * The access, preaccess and log directives as the compiler reads them:
 * nginx's `[emerg]` for each bad value (a table), inheritance of each
 * setting, and the bound on access log files.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { compileText, refusals } from "../engine/_conf.ts";
import { MAX_ACCESS_LOG_FILES } from "../../src/nginx_conf/compile_logs.ts";

function errors(http: string): string[] {
  return refusals(http).map((e) =>
    e.replace(/ in \/n\/conf\/nginx.conf:\d+$/, " :L")
  );
}

const ZONES = "limit_req_zone $binary_remote_addr zone=one:1m rate=1r/s;\n" +
  "limit_conn_zone $binary_remote_addr zone=addr:1m;\n";

Deno.test("compileHttp() refuses bad access and limit directives with nginx's messages", async (t) => {
  const cases: [string, string[]][] = [
    ["server { location / { limit_req zone=nope; } }", [
      'zero size shared memory zone "nope"',
    ]],
    ["server { location / { limit_conn nope 1; } }", [
      'zero size shared memory zone "nope"',
    ]],
    [`${ZONES}limit_req_zone $remote_addr zone=one:1m rate=1r/s; server {}`, [
      'limit_req_zone "one" is already bound to key "$binary_remote_addr" :L',
    ]],
    [`${ZONES}limit_conn_zone $remote_addr zone=one:1m; server {}`, [
      'the shared memory zone "one" is already declared for a different use :L',
    ]],
    [`${ZONES}server { limit_req zone=one; limit_req zone=one; }`, [
      '"limit_req" directive is duplicate :L',
    ]],
    [`${ZONES}server { limit_conn addr 1; limit_conn addr 2; }`, [
      '"limit_conn" directive is duplicate :L',
    ]],
    // nginx compares the zones `ngx_shared_memory_add` returned: an
    // undeclared zone named twice is a duplicate too.
    ["server { limit_req zone=nope; limit_req zone=nope; }", [
      '"limit_req" directive is duplicate :L',
      'zero size shared memory zone "nope"',
    ]],
    ["server { limit_conn nope 1; limit_conn nope 2; }", [
      '"limit_conn" directive is duplicate :L',
      'zero size shared memory zone "nope"',
    ]],
    [`${ZONES}server { limit_conn addr 0; }`, [
      'invalid number of connections "0" :L',
    ]],
    ["limit_req_zone $binary_remote_addr zone=x:1k rate=1r/s; server {}", [
      'zone "zone=x:1k" is too small :L',
    ]],
    ["limit_req_zone $binary_remote_addr zone=x:1m rate=fast; server {}", [
      'invalid rate "rate=fast" :L',
    ]],
    [`${ZONES}server { limit_req zone=one burst=x; }`, [
      'invalid burst value "burst=x" :L',
    ]],
    ["server { limit_req_status 600; location / {} location /a/ {} }", [
      "value must be between 400 and 599 :L",
    ]],
    ["server { limit_conn_log_level debug; }", ['invalid value "debug" :L']],
    ["server { satisfy some; }", ['invalid value "some" :L']],
    ["server { auth_basic_user_file $nosuch; }", [
      'unknown "nosuch" variable :L',
    ]],
    ["server { access_log logs/$host.log; }", [
      '"access_log logs/$host.log" is not supported: the gateway opens its log files at start :L',
    ]],
    ["server { access_log logs/a.log nosuch; }", [
      'unknown log format "nosuch" :L',
    ]],
    ["server { access_log logs/a.log combined gzip; }", [
      '"access_log … gzip" is not supported :L',
    ]],
    ["server { access_log off combined; }", [
      'invalid parameter "combined" :L',
    ]],
    ["server { access_log syslog:server=10.0.0.1; }", [
      '"access_log syslog:server=10.0.0.1" is not supported: the gateway writes a file :L',
    ]],
  ];
  for (const [http, expected] of cases) {
    await t.step(http, () => {
      deepStrictEqual(errors(`http { ${http} }`), expected);
    });
  }
});

Deno.test("compileHttp() inherits auth_basic, satisfy and the limits as nginx merges them", () => {
  const conf = compileText(`http {
    ${ZONES}
    auth_basic "Station";
    limit_req zone=one burst=5;
    limit_req_status 429;
    server {
      auth_basic_user_file users;
      satisfy any;
      location /a/ { }
      location /off/ { auth_basic off; limit_conn addr 2; }
      location /own/ { limit_req zone=one; limit_req_log_level warn; }
    }
  }`);
  const server = conf.servers[0]!;
  const [a, off, own] = ["/a/", "/off/", "/own/"].map((name) =>
    server.conf.locations.prefixes.find((l) => l.name === name)!
  );
  strictEqual(a!.authBasic?.realm.text, "Station");
  strictEqual(a!.authBasic?.userFile.text, "users");
  strictEqual(a!.authBasic?.confPrefix, "/n/conf");
  strictEqual(a!.satisfy, "any");
  strictEqual(a!.limitReq?.limits[0]?.rule.burst, 5000);
  strictEqual(a!.limitReq?.status, 429);
  strictEqual(a!.limitConn, null);
  strictEqual(off!.authBasic?.realm.text, "off");
  strictEqual(off!.limitConn?.limits[0]?.conn, 2);
  // A level's own limit_req replaces the list; the status still inherits.
  strictEqual(own!.limitReq?.limits[0]?.rule.burst, 0);
  strictEqual(own!.limitReq?.logLevel, "warn");
  strictEqual(own!.limitReq?.status, 429);
  // One zone for every location that names it.
  strictEqual(a!.limitReq?.limits[0]?.zone, own!.limitReq?.limits[0]?.zone);
});

Deno.test("compileHttp() keeps every access log file once and refuses more than its bound", () => {
  const conf = compileText(`http {
    access_log logs/a.log;
    server {
      location /b/ { access_log logs/b.log; access_log logs/a.log; }
      location /off/ { access_log off; }
    }
  }`);
  deepStrictEqual(conf.accessLogFiles, ["/n/logs/a.log", "/n/logs/b.log"]);
  const many = Array.from(
    { length: MAX_ACCESS_LOG_FILES + 1 },
    (_, i) => `location /l${i}/ { access_log logs/l${i}.log; }`,
  ).join("\n");
  deepStrictEqual(errors(`http { access_log off; server { ${many} } }`), [
    `"access_log /n/logs/l${MAX_ACCESS_LOG_FILES}.log" is not supported: the gateway opens at most ${MAX_ACCESS_LOG_FILES} access log files :L`,
  ]);
});
