import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  DEFAULT_HEADER_BUFFERS,
  HeaderBufferReplay,
  tooLongHeaderMessage,
  tooLongRequestLine,
} from "../../src/routing/header_buffers.ts";
import { checkRequestLine } from "../../src/routing/request_line_checks.ts";
import { isValidHost } from "../../src/routing/host.ts";

/** Places lines of these lengths; the first that does not fit and what was held. */
function replay(lengths: number[], limits = DEFAULT_HEADER_BUFFERS): string {
  const r = new HeaderBufferReplay(limits);
  for (const [i, n] of lengths.entries()) {
    const held = r.place(n);
    if (held >= 0) return `line ${i} held ${held}`;
  }
  return "fits";
}

Deno.test("HeaderBufferReplay places lines as ngx_http_alloc_large_header_buffer does", () => {
  const cases: [number[], string][] = [
    [[30, 20, 2], "fits"],
    // A line of exactly one large buffer fits; one byte more does not.
    [[30, 8192, 2], "fits"],
    [[30, 8193, 2], "line 1 held 8192"],
    // Each 6,006-byte line needs a buffer of its own: four fit, the fifth
    // starts in the fourth buffer's 2,186 free bytes and has nowhere to go.
    [[40, 6006, 6006, 6006, 6006, 6006, 2], "line 5 held 2186"],
    [[40, 6006, 6006, 6006, 6006, 2], "fits"],
    // Small lines share buffers.
    [[40, ...Array(100).fill(300), 2], "fits"],
    [[40, ...Array(200).fill(300), 2], "line 112 held 92"],
  ];
  for (const [lengths, expected] of cases) {
    strictEqual(replay(lengths), expected, JSON.stringify(lengths.length));
  }
  strictEqual(
    replay([30, 2000, 2], { number: 1, size: 1024 }),
    "line 1 held 1024",
  );
});

Deno.test("tooLongRequestLine() and tooLongHeaderMessage() show what nginx held", () => {
  strictEqual(
    tooLongRequestLine(
      `GET /${"a".repeat(8176)} HTTP/1.1`,
      DEFAULT_HEADER_BUFFERS,
    ),
    null,
  );
  const held = tooLongRequestLine(
    `GET /${"a".repeat(9000)} HTTP/1.1`,
    DEFAULT_HEADER_BUFFERS,
  );
  strictEqual(held, `GET /${"a".repeat(8187)}`);
  const message = tooLongHeaderMessage(`x: ${"b".repeat(5000)}`, 8192);
  strictEqual(
    message,
    `client sent too long header line: "x: ${"b".repeat(1745)}..."`,
  );
});

Deno.test("checkRequestLine() accepts nginx's method tokens only", () => {
  const cases: [string, string][] = [
    ["GET", "ok"],
    ["MY_METH", "ok"],
    ["MY-METH", "ok"],
    ["PROPFIND", "ok"],
    ["get", "400"],
    ["trace", "400"],
    ["Get", "400"],
    ["M1", "400"],
    ["GET.", "400"],
    ["GÉT", "400"],
  ];
  for (const [method, expected] of cases) {
    const v = checkRequestLine(method, `${method} / HTTP/1.1`);
    strictEqual(v.kind === "ok" ? "ok" : String(v.status), expected, method);
  }
  const long = checkRequestLine("GET", `GET /${"a".repeat(9000)} HTTP/1.1`);
  deepStrictEqual(long.kind === "reject" && [long.status, long.event.message], [
    414,
    "client sent too long URI",
  ]);
});

Deno.test("isValidHost() refuses what ngx_http_validate_host refuses", () => {
  const cases: [string, boolean, boolean][] = [
    // host, on Linux, on Windows
    ["localhost:8081", true, true],
    ["[::1]:8081", true, true],
    ["a@b", true, true],
    ["a?b", true, true],
    ["a:b:c", true, true],
    ["[::1", true, true],
    ["host.", true, true],
    ["a\\b", true, false],
    ["a/b", false, false],
    ["a b", false, false],
    ["a\tb", false, false],
    ["a\x7fb", false, false],
    ["a..b", false, false],
    [".", false, false],
    [":80", false, false],
    ["", false, false],
  ];
  for (const [host, linux, windows] of cases) {
    strictEqual(isValidHost(host, false), linux, JSON.stringify(host));
    strictEqual(isValidHost(host, true), windows, JSON.stringify(host));
  }
});

Deno.test("isValidHost() answers a Host asked again as the first time, on either platform", () => {
  const asked: [string, boolean, boolean][] = [
    // host, windows, valid
    ["a\\b", false, true],
    ["a\\b", false, true],
    ["a\\b", true, false],
    ["a\\b", false, true],
    ["localhost:8081", true, true],
    ["localhost:8081", true, true],
    ["a/b", true, false],
    ["a/b", true, false],
    ["localhost:8081", false, true],
  ];
  for (const [host, windows, valid] of asked) {
    strictEqual(isValidHost(host, windows), valid, `${host} ${windows}`);
  }
});
