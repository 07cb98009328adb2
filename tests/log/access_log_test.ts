import { strictEqual } from "node:assert/strict";
import { parseBasicCredentials } from "../../src/access/mod.ts";
import {
  escapeLogValue,
  formatAccessLogLine,
  formatTimeLocal,
} from "../../src/log/access_log.ts";

const basicAuthUser = (h: string | null) => parseBasicCredentials(h)?.user;

Deno.test("formatAccessLogLine() writes nginx's combined format", () => {
  const time = new Date(2026, 10, 21, 7, 46, 35);
  const tz = formatTimeLocal(time).slice(-5);
  strictEqual(
    formatAccessLogLine({
      time,
      remoteAddr: "127.0.0.1",
      request: "POST /api/loginms HTTP/1.1",
      status: 502,
      bodyBytesSent: 157,
      userAgent: "curl/7.88.1",
    }),
    `127.0.0.1 - - [21/Nov/2026:07:46:35 ${tz}] "POST /api/loginms HTTP/1.1" 502 157 "-" "curl/7.88.1"`,
  );
  strictEqual(
    formatAccessLogLine({
      time,
      remoteAddr: "127.0.0.1",
      remoteUser: "u",
      request: "POST /api/loginms HTTP/1.0",
      status: 502,
      bodyBytesSent: 157,
    }),
    `127.0.0.1 - u [21/Nov/2026:07:46:35 ${tz}] "POST /api/loginms HTTP/1.0" 502 157 "-" "-"`,
  );
});

Deno.test("formatAccessLogLine() prints no status as 000, as nginx's %03ui", () => {
  const time = new Date(2026, 10, 23, 23, 55, 5);
  const tz = formatTimeLocal(time).slice(-5);
  strictEqual(
    formatAccessLogLine({
      time,
      remoteAddr: "127.0.0.1",
      request: "GET /api/x HTTP/1.1",
      status: 0,
      bodyBytesSent: 0,
      userAgent: "curl/7.88.1",
    }),
    `127.0.0.1 - - [23/Nov/2026:23:55:05 ${tz}] "GET /api/x HTTP/1.1" 000 0 "-" "curl/7.88.1"`,
  );
});

Deno.test("escapeLogValue() escapes as ngx_http_log_escape", async (t) => {
  const cases: [string, "utf-8" | "latin1", string][] = [
    ['GET /api/q"x HTTP/1.1', "utf-8", "GET /api/q\\x22x HTTP/1.1"],
    ["a\\b", "utf-8", "a\\x5Cb"],
    ["tab\there", "utf-8", "tab\\x09here"],
    ["ü", "utf-8", "\\xC3\\xBC"],
    ["plain ~!", "utf-8", "plain ~!"],
    // A header's UTF-8 "ü" as Deno holds it: the two chars of its bytes.
    ["\u00c3\u00bc", "latin1", "\\xC3\\xBC"],
    ['\u00ff"', "latin1", "\\xFF\\x22"],
    ["plain ~!", "latin1", "plain ~!"],
  ];
  for (const [input, encoding, expected] of cases) {
    await t.step(
      `${encoding} ${input}`,
      () => strictEqual(escapeLogValue(input, encoding), expected),
    );
  }
});

Deno.test("formatTimeLocal() prints the offset as +hhmm/-hhmm", () => {
  strictEqual(
    /^\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}$/.test(
      formatTimeLocal(new Date()),
    ),
    true,
  );
});

Deno.test("basicAuthUser() reads the user of Basic credentials only", () => {
  strictEqual(basicAuthUser("Basic dTpw"), "u");
  strictEqual(basicAuthUser("basic " + btoa("station:secret")), "station");
  strictEqual(basicAuthUser("Bearer abc"), undefined);
  strictEqual(basicAuthUser("Basic !!!"), undefined);
  strictEqual(basicAuthUser(null), undefined);
});

Deno.test("basicAuthUser() keeps the user's bytes for the log to escape", async (t) => {
  // [user bytes sent, what nginx's $remote_user logs]
  const cases: [number[], string][] = [
    [[0xff], "\\xFF"],
    [[0x80, 0x41], "\\x80A"],
    [[0xc3, 0xa4], "\\xC3\\xA4"],
    [[0xe4, 0xb8, 0xad], "\\xE4\\xB8\\xAD"],
    [[0xc3], "\\xC3"],
    [[0x22, 0x5c, 0x0a], "\\x22\\x5C\\x0A"],
    [[0x75], "u"],
  ];
  for (const [user, logged] of cases) {
    await t.step(logged, () => {
      const header = "Basic " +
        btoa(String.fromCharCode(...user, 0x3a, 0x70));
      const remoteUser = basicAuthUser(header);
      const line = formatAccessLogLine({
        time: new Date(0),
        remoteAddr: "127.0.0.1",
        ...(remoteUser === undefined ? {} : { remoteUser }),
        request: "GET / HTTP/1.1",
        status: 200,
        bodyBytesSent: 0,
      });
      strictEqual(line.split(" ")[2], logged);
    });
  }
});
