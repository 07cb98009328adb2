import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  describeError,
  formatConsoleLine,
  formatErrorLogLine,
  formatErrorLogTime,
  isLevelEnabled,
  MAX_ERROR_LINE_LENGTH,
} from "../../src/log/error_log.ts";

const base = {
  time: new Date(2026, 10, 21, 7, 46, 35),
  level: "error" as const,
  pid: 2118,
  tid: 2118,
};

Deno.test("formatErrorLogLine() writes nginx's lines byte for byte", async (t) => {
  const cases: [string, Parameters<typeof formatErrorLogLine>[0], string][] = [
    [
      "refused, Linux, with referrer (as nginx 1.22 writes it)",
      {
        ...base,
        connection: 1,
        message: "connect() failed",
        osError: { code: 111, text: "Connection refused" },
        action: "connecting to upstream",
        client: "127.0.0.1",
        server: "localhost",
        request: "POST /api/loginms HTTP/1.1",
        upstream: "http://127.0.0.1:8080/loginms",
        host: "localhost:8081",
        referrer: "http://localhost:8081/",
      },
      '2026/11/21 07:46:35 [error] 2118#2118: *1 connect() failed (111: Connection refused) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:8080/loginms", host: "localhost:8081", referrer: "http://localhost:8081/"',
    ],
    [
      "a UTF-8 Referer as Headers holds it: the line spells its bytes",
      {
        ...base,
        connection: 3,
        message: "connect() failed",
        osError: { code: 111, text: "Connection refused" },
        action: "connecting to upstream",
        client: "127.0.0.1",
        server: "localhost",
        request: "GET /api/caf\u00e9 HTTP/1.1",
        upstream: "http://127.0.0.1:8080/caf\u00e9",
        host: "localhost",
        referrer: "http://localhost/caf\u00c3\u00a9",
      },
      '2026/11/21 07:46:35 [error] 2118#2118: *3 connect() failed (111: Connection refused) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "GET /api/caf\u00e9 HTTP/1.1", upstream: "http://127.0.0.1:8080/caf\u00e9", host: "localhost", referrer: "http://localhost/caf\u00e9"',
    ],
    [
      "no referrer, no host (HTTP/1.0, as nginx 1.22 writes it)",
      {
        ...base,
        connection: 28,
        message: "connect() failed",
        osError: { code: 111, text: "Connection refused" },
        action: "connecting to upstream",
        client: "127.0.0.1",
        server: "localhost",
        request: "POST /api/loginms HTTP/1.0",
        upstream: "http://127.0.0.1:8080/loginms",
      },
      '2026/11/21 07:46:35 [error] 2118#2118: *28 connect() failed (111: Connection refused) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.0", upstream: "http://127.0.0.1:8080/loginms"',
    ],
    [
      "static file missing: no action, no upstream",
      {
        ...base,
        connection: 2,
        message: 'open() "/srv/html/favicon.ico" failed',
        osError: { code: 2, text: "No such file or directory" },
        client: "127.0.0.1",
        server: "localhost",
        request: "GET /favicon.ico HTTP/1.1",
        host: "localhost:8081",
        referrer: "http://localhost:8081/",
      },
      '2026/11/21 07:46:35 [error] 2118#2118: *2 open() "/srv/html/favicon.ico" failed (2: No such file or directory), client: 127.0.0.1, server: localhost, request: "GET /favicon.ico HTTP/1.1", host: "localhost:8081", referrer: "http://localhost:8081/"',
    ],
    [
      "premature close: no OS error",
      {
        ...base,
        connection: 48,
        message: "upstream prematurely closed connection",
        action: "reading response header from upstream",
        client: "127.0.0.1",
        server: "localhost",
        request: "POST /api/loginms HTTP/1.1",
        upstream: "http://127.0.0.1:8080/loginms",
        host: "localhost:8081",
      },
      '2026/11/21 07:46:35 [error] 2118#2118: *48 upstream prematurely closed connection while reading response header from upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:8080/loginms", host: "localhost:8081"',
    ],
    [
      "outside a request: no connection, no client",
      {
        ...base,
        level: "emerg",
        message: "bind() to 127.0.0.1:8081 failed",
        osError: { code: 98, text: "Address already in use" },
      },
      "2026/11/21 07:46:35 [emerg] 2118#2118: bind() to 127.0.0.1:8081 failed (98: Address already in use)",
    ],
  ];
  for (const [name, entry, expected] of cases) {
    await t.step(name, () => strictEqual(formatErrorLogLine(entry), expected));
  }
});

Deno.test("formatErrorLogLine() cuts lines at nginx's 2048 bytes, newline included", async (t) => {
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  await t.step("ASCII", () => {
    const line = formatErrorLogLine({
      ...base,
      message: "x",
      client: "127.0.0.1",
      server: "localhost",
      referrer: "r".repeat(5000),
    });
    strictEqual(bytes(line), MAX_ERROR_LINE_LENGTH);
    strictEqual(MAX_ERROR_LINE_LENGTH, 2047);
  });
  await t.step("UTF-8 counts bytes and is cut between characters", () => {
    // A decoded path of 800 × "中" (3 bytes each), as an open() line has it.
    for (const pad of ["", "a", "ab"]) {
      const line = formatErrorLogLine({
        ...base,
        message: `open() "/srv/${pad}${"中".repeat(800)}" failed`,
      });
      const n = bytes(line);
      strictEqual(
        n <= MAX_ERROR_LINE_LENGTH && n > MAX_ERROR_LINE_LENGTH - 3,
        true,
        `${n}`,
      );
      strictEqual(line.endsWith("中"), true);
    }
  });
});

Deno.test("formatErrorLogLine() escapes what a client or upstream sent", async (t) => {
  const cases: [
    string,
    Partial<Parameters<typeof formatErrorLogLine>[0]>,
    string,
  ][] = [
    // Header values are ByteStrings: one char per byte received.
    ["CR and LF in the host", { host: "a\r\nb" }, 'host: "a\\x0D\\x0Ab"'],
    [
      "NUL, ESC and DEL in the referrer",
      { referrer: "a\0\x1b[31m\x7f" },
      'referrer: "a\\x00\\x1B[31m\\x7F"',
    ],
    ["UTF-8 bytes stay text", { referrer: "/\xe4\xb8\xad" }, 'referrer: "/中"'],
    [
      "bytes that are not UTF-8",
      { referrer: "/\xff\xe4\xb8" },
      'referrer: "/\\xFF\\xE4\\xB8"',
    ],
    [
      "the request line is text",
      { request: "GET /\x01中 HTTP/1.1" },
      'request: "GET /\\x01中 HTTP/1.1"',
    ],
    [
      "upstream URL",
      { upstream: "http://u/\x1b" },
      'upstream: "http://u/\\x1B"',
    ],
    [
      "a message's byte that is not UTF-8 (a path decoded from %FF)",
      { message: 'open() "/srv/a\udcffb" failed' },
      'open() "/srv/a\\xFFb" failed',
    ],
  ];
  for (const [name, fields, expected] of cases) {
    await t.step(name, () => {
      const line = formatErrorLogLine({
        ...base,
        message: "x",
        client: "127.0.0.1",
        server: "localhost",
        ...fields,
      });
      strictEqual(line.includes(expected), true, line);
      const controls = [...line].filter((c) =>
        c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f
      );
      deepStrictEqual(controls, []);
    });
  }
});

Deno.test("formatErrorLogTime() pads every field", () => {
  strictEqual(
    formatErrorLogTime(new Date(2024, 0, 5, 3, 4, 5)),
    "2024/01/05 03:04:05",
  );
});

Deno.test("isLevelEnabled() writes a level and everything more severe", () => {
  strictEqual(isLevelEnabled("error", "error"), true);
  strictEqual(isLevelEnabled("crit", "error"), true);
  strictEqual(isLevelEnabled("warn", "error"), false);
  strictEqual(isLevelEnabled("debug", "debug"), true);
});

Deno.test("describeError() is one line with the first stack frame", () => {
  const text = describeError(new RangeError("bad\nvalue"));
  match(text, /^RangeError: bad value at .*error_log_test\.ts:\d+:\d+\)?$/);
  strictEqual(describeError(42), "42");
});

// Values an nginx.conf, a flag or an OS can put into a message.
const HOSTILE_VALUES = [
  "a\nb",
  "a\r\nb",
  "a\rb",
  "\x1b[31mred",
  "nul\0byte",
  "tab\tvt\x0bff\x0c",
  "del\x7f",
  "line\u2028sep",
];

Deno.test("formatErrorLogLine() and formatConsoleLine() keep hostile message text on one line", async (t) => {
  for (const value of HOSTILE_VALUES) {
    await t.step(JSON.stringify(value), () => {
      const message = `unknown directive "${value}" in /c/nginx.conf:3`;
      const osError = { code: 2, text: value };
      const lines = [
        formatErrorLogLine({
          time: new Date(0),
          level: "emerg",
          pid: 1,
          tid: 1,
          message,
          osError,
        }),
        formatConsoleLine("emerg", message, osError).slice(0, -1),
      ];
      for (const line of lines) {
        // deno-lint-ignore no-control-regex
        strictEqual(/[\x00-\x1f\x7f]/.test(line), false, line);
        strictEqual(line.includes("unknown directive"), true);
      }
    });
  }
});
