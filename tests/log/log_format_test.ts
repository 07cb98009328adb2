import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  COMBINED,
  compileLogFormat,
  escapeLogJson,
  formatAccessLogLine,
  formatLogLine,
  formatTimeIso8601,
  formatTimeLocal,
  logLineBytes,
  type LogRecord,
} from "../../src/log/mod.ts";

const TIME = new Date(2026, 10, 21, 7, 46, 35, 120);

function record(overrides: Partial<LogRecord> = {}): LogRecord {
  return {
    time: TIME,
    startMs: TIME.getTime() - 1503,
    remoteAddr: "127.0.0.1",
    remoteUser: undefined,
    request: "GET /api/x HTTP/1.1",
    requestLength: 120,
    headers: new Headers({ "user-agent": "curl/7.88.1", "x-a": 'q"\\' }),
    connection: 7,
    connectionRequests: 2,
    pipelined: false,
    status: 200,
    bodyBytesSent: 5,
    bytesSent: 160,
    responseHeaders: new Headers({ "content-type": "text/plain" }),
    ...overrides,
  };
}

function line(args: string[], r: LogRecord = record()): string {
  const compiled = compileLogFormat("t", args);
  if (!compiled.ok) throw new Error(compiled.error);
  return formatLogLine(compiled.format, r);
}

// [arguments, record overrides, line]
const LINES: [string[], Partial<LogRecord>, string][] = [
  [
    ["$status $body_bytes_sent $bytes_sent $request_length"],
    {},
    "200 5 160 120",
  ],
  [["$status"], { status: 0 }, "000"],
  [
    ["$request_time $msec"],
    {},
    `1.503 ${Math.floor(TIME.getTime() / 1000)}.120`,
  ],
  [["$request_time"], { startMs: TIME.getTime() + 5 }, "0.000"],
  [["$pipe $connection $connection_requests"], {}, ". 7 2"],
  [["$pipe"], { pipelined: true }, "p"],
  [["$time_local"], {}, formatTimeLocal(TIME)],
  [["$time_iso8601"], {}, formatTimeIso8601(TIME)],
  // Arguments are joined with nothing between them.
  [["$status", " ", "$pipe"], {}, "200 ."],
  [["a", "b"], {}, "ab"],
  [["${status}x"], {}, "200x"],
  [["$STATUS"], {}, "200"],
  // Not found: "-" in default, nothing in json and none.
  [["$remote_user|$http_referer|$upstream_addr"], {}, "-|-|-"],
  [["escape=json", "$remote_user|$http_referer|$upstream_addr"], {}, "||"],
  [["escape=none", "$remote_user|$http_referer"], {}, "|"],
  // Found but empty: nothing, even in default.
  [["[$http_referer]"], { headers: new Headers({ referer: "" }) }, "[]"],
  // Escaping of variables, never of the literal text.
  [['"$http_x_a"'], {}, '"q\\x22\\x5C"'],
  [["escape=json", '"$http_x_a"'], {}, '"q\\"\\\\"'],
  [["escape=none", '"$http_x_a"'], {}, '"q"\\"'],
  [["escape=default", "$http_x_a"], {}, "q\\x22\\x5C"],
  [["$sent_http_content_type $sent_http_x_none"], {}, "text/plain -"],
  [["$remote_user"], { remoteUser: "\u00c3\u00a4" }, "\\xC3\\xA4"],
  [
    ["escape=json", "$remote_user"],
    { remoteUser: "\u00c3\u00a4\u0001" },
    "ä\\u0001",
  ],
  [["escape=none", "$remote_user"], { remoteUser: "\u00c3\u00a4" }, "ä"],
  [
    ["$request"],
    { request: 'GET /ü"x HTTP/1.1' },
    "GET /\\xC3\\xBC\\x22x HTTP/1.1",
  ],
  [
    ["escape=json", "$request"],
    { request: "GET /ü\tx HTTP/1.1" },
    "GET /ü\\tx HTTP/1.1",
  ],
  // Upstream tries: ", " between tries, " : " after an internal redirect.
  [
    ["$upstream_addr|$upstream_status|$upstream_response_time|$upstream_connect_time"],
    {
      upstream: [
        {
          addr: "127.0.0.1:8080",
          status: 502,
          responseMs: 1,
          connectMs: null,
          headerMs: null,
        },
        {
          addr: "127.0.0.1:8081",
          status: 200,
          responseMs: 25,
          connectMs: 2,
          headerMs: 20,
        },
        {
          addr: "backend",
          status: 0,
          responseMs: 0,
          connectMs: null,
          headerMs: null,
          newGroup: true,
        },
      ],
    },
    "127.0.0.1:8080, 127.0.0.1:8081 : backend|502, 200 : -|0.001, 0.025 : 0.000|-, 0.002 : -",
  ],
];
for (const [args, overrides, want] of LINES) {
  Deno.test(`formatLogLine() ${JSON.stringify(args)} as nginx writes it`, () => {
    // The bytes the line is written as (UTF-8 text, a value's bytes as
    // they came).
    deepStrictEqual(
      logLineBytes(line(args, record(overrides))),
      new TextEncoder().encode(want),
    );
  });
}

// [arguments, the value's bytes (a ByteString), the bytes written]
const BYTES: [string[], string, number[]][] = [
  [["$remote_user"], "\u00ff\u00c3\u00a4", [
    ...new TextEncoder().encode("\\xFF\\xC3\\xA4"),
  ]],
  [["escape=json", "$remote_user"], '\u00ff\u00c3\u00a4"', [
    0xff,
    0xc3,
    0xa4,
    0x5c,
    0x22,
  ]],
  [["escape=none", "[$remote_user]"], "\u00ed\u00a0\u0080", [
    0x5b,
    0xed,
    0xa0,
    0x80,
    0x5d,
  ]],
];
for (const [args, user, want] of BYTES) {
  Deno.test(`formatLogLine() ${JSON.stringify(args)} writes bytes above 0x7F as nginx: ${JSON.stringify(user)}`, () => {
    deepStrictEqual(
      [...logLineBytes(line(args, record({ remoteUser: user })))],
      want,
    );
  });
}

// [arguments, nginx's [emerg] message]
const ERRORS: [string[], string][] = [
  [["escape=xml", "$status"], 'unknown log format escaping "xml"'],
  [["a $"], 'invalid parameter "$"'],
  [["a $ b"], 'invalid parameter "$ b"'],
  [["${"], 'invalid parameter "${"'],
  [["${status"], 'the closing bracket in "status" variable is missing'],
  [["${sta-tus}"], 'the closing bracket in "sta" variable is missing'],
  [["${}"], 'invalid parameter "${}"'],
  [["$no_such_thing"], 'unknown "no_such_thing" variable'],
];
for (const [args, error] of ERRORS) {
  Deno.test(`compileLogFormat() refuses ${JSON.stringify(args)} with nginx's words`, () => {
    deepStrictEqual(compileLogFormat("t", args), { ok: false, error });
  });
}

Deno.test("compileLogFormat() asks the scope for other variables", () => {
  const compiled = compileLogFormat("t", ["$host|$uri"], {
    variable: (name) =>
      name === "host" ? { read: () => "station", encoding: "utf-8" } : null,
  });
  deepStrictEqual(compiled, { ok: false, error: 'unknown "uri" variable' });
  const ok = compileLogFormat("t", ["$host"], {
    variable: () => ({ read: () => 'a"b', encoding: "utf-8" }),
  });
  strictEqual(ok.ok && formatLogLine(ok.format, record()), "a\\x22b");
});

Deno.test("combined through formatLogLine() is today's access line, byte for byte", () => {
  const entries = [
    {
      remoteUser: "u",
      referrer: "http://localhost:8081/",
      userAgent: "curl/7.88.1",
    },
    { remoteUser: undefined, referrer: undefined, userAgent: undefined },
    { remoteUser: '\u00ff"', referrer: "a\u00c3\u00bc", userAgent: "b\\" },
  ];
  for (const e of entries) {
    const headers = new Headers();
    if (e.referrer !== undefined) headers.set("referer", e.referrer);
    if (e.userAgent !== undefined) headers.set("user-agent", e.userAgent);
    strictEqual(
      formatLogLine(
        COMBINED,
        record({
          remoteUser: e.remoteUser,
          headers,
          status: 502,
          bodyBytesSent: 157,
        }),
      ),
      formatAccessLogLine({
        time: TIME,
        remoteAddr: "127.0.0.1",
        request: "GET /api/x HTTP/1.1",
        status: 502,
        bodyBytesSent: 157,
        ...(e.remoteUser === undefined ? {} : { remoteUser: e.remoteUser }),
        ...(e.referrer === undefined ? {} : { referrer: e.referrer }),
        ...(e.userAgent === undefined ? {} : { userAgent: e.userAgent }),
      }),
    );
  }
});

Deno.test('formatAccessLogLine() prints an empty Referer or User-Agent as nginx: "", not "-"', () => {
  const tz = formatTimeLocal(TIME).slice(-5);
  strictEqual(
    formatAccessLogLine({
      time: TIME,
      remoteAddr: "127.0.0.1",
      request: "GET /x HTTP/1.1",
      status: 404,
      bodyBytesSent: 153,
      referrer: "",
      userAgent: "",
    }),
    `127.0.0.1 - - [21/Nov/2026:07:46:35 ${tz}] "GET /x HTTP/1.1" 404 153 "" ""`,
  );
});

Deno.test("escapeLogJson() escapes as ngx_escape_json", () => {
  strictEqual(
    escapeLogJson("\b\f\n\r\t\u001f\u007f"),
    "\\b\\f\\n\\r\\t\\u001F\u007f",
  );
});
