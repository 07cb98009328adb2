/**
 * Variables that read the machine rather than the request, in a gateway
 * run with its own permissions: they answer, never a 500.
 */
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { freePort, rawRequest } from "../_utils.ts";
import { gatewayPermissions, startMain } from "../_in_process.ts";
import { Variables } from "../../src/engine/variables.ts";
import { compileText, requestVars } from "./_conf.ts";
import type { RequestVars } from "../../src/engine/mod.ts";
import type { LogRecord } from "../../src/log/mod.ts";

/** The machine's name, read outside the test's narrower permissions. */
const HOSTNAME = Deno.hostname();

Deno.test({
  name:
    "$hostname is the machine's name in lower case, under the gateway's run flags",
  // In process, with the run flags' permissions (not a `deno run`, about
  // 0.2 s of CPU): $pid is this process's.
  permissions: gatewayPermissions(),
}, async () => {
  const prefix = await Deno.makeTempDir({ prefix: "vars-gw-" });
  try {
    await Deno.mkdir(join(prefix, "logs"));
    await Deno.mkdir(join(prefix, "conf"), { recursive: true });
    const conf = join(prefix, "conf", "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `events {}
http {
  error_log ${prefix}/logs/error.log;
  access_log off;
  server {
    listen 127.0.0.1:${freePort()};
    location / { add_header X-Host $hostname; return 200 "$hostname $pid\\n"; }
  }
}`,
    );
    await using gw = await startMain(["--nginx-conf", conf]);
    const raw = await rawRequest(
      gw.port,
      "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    );
    const name = HOSTNAME.toLowerCase();
    strictEqual(raw.slice(9, 12), "200");
    strictEqual(raw.toLowerCase().includes(`\r\nx-host: ${name}\r\n`), true);
    strictEqual(raw.split("\r\n\r\n")[1], `${name} ${Deno.pid}\n`);
  } finally {
    await Deno.remove(prefix, { recursive: true });
  }
});

Deno.test("$http_NAME reads the walked fields as Headers.get reads the fields themselves", async (t) => {
  const scope = new Variables(new Map(), new Set());
  // [fields as sent, variable]
  const cases: [[string, string][], string][] = [
    [[["host", "h"], ["upgrade", "websocket"]], "http_upgrade"],
    [[["host", "h"]], "http_upgrade"],
    [[["x-forwarded-for", "1.2.3.4"]], "http_x_forwarded_for"],
    [[["Accept", "a"], ["accept", "b"]], "http_accept"],
    [[["set-cookie", "a=1"], ["set-cookie", "b=2"]], "http_set_cookie"],
    [[["connection", "Upgrade, keep-alive"]], "http_connection"],
    [[], "http_host"],
  ];
  for (const [sent, name] of cases) {
    await t.step(`${name} of ${JSON.stringify(sent)}`, () => {
      const headers = new Headers();
      for (const [n, v] of sent) headers.append(n, v);
      const fields: string[] = [];
      headers.forEach((value, key) => fields.push(key, value));
      const read = scope.reader(name)!;
      const direct = read({ ...requestVars("/"), headers, fields: null });
      const walked = read({ ...requestVars("/"), headers, fields });
      strictEqual(walked, direct);
    });
  }
});

Deno.test("$http_NAME of a field the request lacks is not found, of an empty one empty", () => {
  const scope = new Variables(new Map(), new Set());
  // [fields as sent, variable, value]
  const cases: [[string, string][], string, string | undefined][] = [
    [[], "http_x_t", undefined],
    [[["x-t", ""]], "http_x_t", ""],
    [[["x-t", "v"]], "http_x_t", "v"],
    [[["other", "x-t"]], "http_x_t", undefined],
  ];
  for (const [sent, name, value] of cases) {
    const headers = new Headers(sent);
    const fields: string[] = [];
    headers.forEach((v, key) => fields.push(key, v));
    const read = scope.reader(name)!;
    strictEqual(read({ ...requestVars("/"), headers, fields: null }), value);
    strictEqual(read({ ...requestVars("/"), headers, fields }), value);
  }
});

Deno.test("Variables.variable() reads a value as a log line does: undefined where nginx finds none", async (t) => {
  const maps = compileText(`http {
    map $status $loggable { ~^[23] 0; default 1; }
    map $upstream_status $up { "" none; default $upstream_status; }
    server { listen 80; location ~ ^/c/(?<cap>.+)$ { set $s 1; } }
  }`).maps;
  const scope = new Variables(maps, new Set(["s"]), new Set(["cap"]));
  const record = (vars: RequestVars, log: Partial<LogRecord> = {}) => {
    const r = { status: 200, responseHeaders: new Headers(), ...log, vars };
    vars.log = r as LogRecord;
    return r as LogRecord;
  };
  // [variable, target, fields, the record's, expected]
  const cases: [string, string, HeadersInit, Partial<LogRecord>, unknown][] = [
    ["args", "/a", {}, {}, undefined],
    ["args", "/a?", {}, {}, ""],
    ["query_string", "/a?x=1", {}, {}, "x=1"],
    ["is_args", "/a", {}, {}, ""],
    ["arg_x", "/a?y=1", {}, {}, undefined],
    ["arg_x", "/a?X=", {}, {}, ""],
    ["cookie_c", "/a", { cookie: "b=1; c=2" }, {}, "2"],
    ["cookie_d", "/a", { cookie: "b=1; c=2" }, {}, undefined],
    ["content_type", "/a", {}, {}, undefined],
    ["content_length", "/a", { "content-length": "3" }, {}, "3"],
    ["remote_user", "/a", {}, {}, undefined],
    ["cap", "/a", {}, {}, undefined],
    ["s", "/a", {}, {}, ""],
    ["uri", "/caf%C3%A9", {}, {}, "/caf\xc3\xa9"],
    ["loggable", "/a", {}, { status: 404 }, "1"],
    ["loggable", "/a", {}, { status: 204 }, "0"],
    ["up", "/a", {}, {}, "none"],
    ["up", "/a", {}, {
      upstream: [{
        addr: "a",
        status: 502,
        responseMs: 1,
        connectMs: null,
        headerMs: null,
      }],
    }, "502"],
    ["upstream_http_x_id", "/a", {}, {
      responseHeaders: new Headers({ "x-id": "7" }),
    }, undefined],
    ["sent_trailer_x", "/a", {}, {}, undefined],
    ["ssl_protocol", "/a", {}, {}, undefined],
    ["limit_rate", "/a", {}, {}, "0"],
    ["request_completion", "/a", {}, {}, "OK"],
    ["request_completion", "/a", {}, { status: 499 }, ""],
  ];
  for (const [name, target, fields, log, expected] of cases) {
    await t.step(`$${name} of ${target} ${JSON.stringify(log)}`, () => {
      const vars = requestVars(target, { headers: fields });
      if (name === "uri") vars.uri = "/caf\u00e9";
      strictEqual(scope.variable(name)!.read(record(vars, log)), expected);
    });
  }
  strictEqual(scope.variable("no_such_thing"), null);
  strictEqual(scope.variable("1"), null);
});
