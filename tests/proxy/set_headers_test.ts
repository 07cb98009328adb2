import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { fieldPlan, upstreamFields } from "../../src/proxy/mod.ts";
import { locationConf } from "./_location.ts";
import { varsWith } from "../_location_conf.ts";

const vars = (headers: Headers) =>
  varsWith({
    requestUri: "/api/x",
    uri: "/api/x",
    headers,
    remoteAddr: "10.0.0.7",
    remotePort: 5000,
    serverPort: 8081,
    host: "station.local",
    proxyHost: "127.0.0.1:8080",
  });

const CLIENT = {
  host: "station.local:8081",
  connection: "keep-alive, x-foo",
  "keep-alive": "timeout=5",
  te: "trailers",
  upgrade: "h2c",
  expect: "100-continue",
  "content-length": "2",
  "transfer-encoding": "chunked",
  "proxy-connection": "keep-alive",
  "x-foo": "bar",
  "x-forwarded-for": "203.0.113.9",
  cookie: "a=1",
};

Deno.test("upstreamFields() sends nginx's defaults first and passes the client's fields nginx passes", () => {
  const conf = locationConf({ name: "/api/", pass: "http://127.0.0.1:8080/" });
  const out = upstreamFields(
    fieldPlan(conf),
    vars(new Headers(CLIENT)),
    new Headers(CLIENT),
  );
  deepStrictEqual(out.set, [["Host", "127.0.0.1:8080"], [
    "Connection",
    "close",
  ]]);
  // Fields Connection names and Proxy-Connection pass, as with nginx.
  deepStrictEqual(out.passed, [
    ["cookie", "a=1"],
    ["proxy-connection", "keep-alive"],
    ["x-foo", "bar"],
    ["x-forwarded-for", "203.0.113.9"],
  ]);
  strictEqual(out.keepalive, false);
  strictEqual(out.upgrade, false);
});

Deno.test("upstreamFields() evaluates proxy_set_header; an empty value sends nothing and drops the client's field", () => {
  const conf = locationConf({
    name: "/api/",
    pass: "http://backend/",
    set: [
      ["X-Real-IP", "$remote_addr"],
      ["Host", "$host"],
      ["X-Forwarded-For", "$proxy_add_x_forwarded_for"],
      ["Cookie", ""],
      ["X-Missing", "$http_x_missing"],
    ],
  });
  const headers = new Headers(CLIENT);
  const out = upstreamFields(fieldPlan(conf), vars(headers), headers);
  deepStrictEqual(out.set, [
    ["X-Real-IP", "10.0.0.7"],
    ["Host", "station.local"],
    ["X-Forwarded-For", "203.0.113.9, 10.0.0.7"],
    ["Connection", "close"],
  ]);
  deepStrictEqual(out.passed, [
    ["proxy-connection", "keep-alive"],
    ["x-foo", "bar"],
  ]);
});

Deno.test("upstreamFields() asks for an upgrade when Upgrade and Connection: upgrade are sent, as nginx whatever the version", () => {
  const ws = { upgrade: "websocket", connection: "Upgrade" };
  const cases: [string, "1.0" | "1.1", [string, string][], boolean, boolean][] =
    [
      [
        "the idiom",
        "1.1",
        [["Upgrade", "$http_upgrade"], ["Connection", "upgrade"]],
        true,
        true,
      ],
      [
        "HTTP/1.0",
        "1.0",
        [["Upgrade", "$http_upgrade"], ["Connection", "upgrade"]],
        true,
        true,
      ],
      ["no Upgrade set", "1.1", [["Connection", "upgrade"]], false, true],
      ["Connection close", "1.1", [["Upgrade", "$http_upgrade"]], false, false],
      ["keep-alive to the upstream", "1.1", [["Connection", ""]], false, true],
    ];
  for (const [what, version, set, upgrade, keepalive] of cases) {
    const conf = locationConf({
      name: "/ws/",
      pass: "http://backend",
      version,
      set,
    });
    const headers = new Headers(ws);
    const out = upstreamFields(fieldPlan(conf), vars(headers), headers);
    strictEqual(out.upgrade, upgrade, what);
    strictEqual(out.keepalive, keepalive, what);
  }
});

Deno.test("upstreamFields() leaves out a set value with a line break instead of smuggling a field", () => {
  const conf = locationConf({
    name: "/api/",
    pass: "http://backend/",
    set: [["X-Uri", "$uri"]],
  });
  const headers = new Headers();
  const v = { ...vars(headers), uri: "/api/a\r\nX-Admin: 1" };
  const out = upstreamFields(fieldPlan(conf), v, headers);
  deepStrictEqual(out.unsafe, ["X-Uri"]);
  deepStrictEqual(out.set.map(([n]) => n), ["Host", "Connection"]);
});

Deno.test("upstreamFields() writes a text value past one byte per char as its UTF-8 bytes", () => {
  const conf = locationConf({
    name: "/api/",
    pass: "http://backend/",
    set: [["X-Uri", "$uri"], ["X-Name", "$http_x_name"]],
  });
  // Deno holds a received field as bytes ("é" is C3 A9); the engine's $uri
  // is text.
  const headers = new Headers({ "x-name": "\u00c3\u00a9" });
  const v = { ...vars(headers), uri: "/api/\u4e2d" };
  const out = upstreamFields(fieldPlan(conf), v, headers);
  deepStrictEqual(out.set.slice(0, 2), [
    ["X-Uri", "/api/\xe4\xb8\xad"],
    ["X-Name", "\u00c3\u00a9"],
  ]);
});

Deno.test("upstreamFields() drops the client's fields nginx drops by their names, per the server's settings", () => {
  const conf = locationConf({ name: "/api/", pass: "http://127.0.0.1:8080/" });
  const client = { "x_tok": "1", "x.dot": "2", "x-ok": "3" };
  /** [settings, the names passed] (the `Headers` path: TLS, error pages) */
  const cases: [
    { underscores: boolean; ignoreInvalid: boolean } | undefined,
    string[],
  ][] = [
    [undefined, ["x-ok"]],
    [{ underscores: true, ignoreInvalid: true }, ["x-ok", "x_tok"]],
    [{ underscores: false, ignoreInvalid: false }, ["x-ok", "x.dot", "x_tok"]],
  ];
  deepStrictEqual(
    cases.map(([fieldNames]) =>
      upstreamFields(
        fieldPlan(conf),
        { ...vars(new Headers(client)), fieldNames },
        new Headers(client),
      ).passed.map(([name]) => name)
    ),
    cases.map(([, names]) => names),
  );
});
