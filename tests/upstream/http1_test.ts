import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  DEFAULT_HEAD_BUFFER,
  parseResponseHead,
} from "../../src/upstream/http1.ts";
import { InvalidResponseError } from "../../src/upstream/field_line_parser.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("parseResponseHead() parses or rejects with nginx's messages", async (t) => {
  const ok: [string, number, string, [string, string][]][] = [
    ["HTTP/1.1 200 OK\r\nA: 1\r\n\r\n", 200, "OK", [["A", "1"]]],
    ["HTTP/1.0 200 Everything Fine\r\n\r\n", 200, "Everything Fine", []],
    ["HTTP/1.1 204\r\n\r\n", 204, "", []],
    [
      "HTTP/1.1 302 Found\r\nSet-Cookie: a\r\nSet-Cookie: b\r\nx-lower: yes\r\n\r\n",
      302,
      "Found",
      [["Set-Cookie", "a"], ["Set-Cookie", "b"], ["x-lower", "yes"]],
    ],
    ["HTTP/1.1 200 OK\r\nEmpty:\r\n\r\n", 200, "OK", [["Empty", ""]]],
    ["HTTP/1.1 200 \r\n\r\n", 200, "", []],
    ["HTTP/1.1 200 OK\r\nA: \t 1 x \t\r\n\r\n", 200, "OK", [["A", "1 x"]]],
    ["HTTP/1.0 404 Not: Found\r\nB:2\r\n\r\n", 404, "Not: Found", [["B", "2"]]],
    // Bare LF line ends, alone or mixed, as nginx accepts them.
    ["HTTP/1.1 200 OK\nA: 1\n\n", 200, "OK", [["A", "1"]]],
    ["HTTP/1.1 200 OK\r\nA: 1\nB: 2\r\n\n", 200, "OK", [["A", "1"], [
      "B",
      "2",
    ]]],
    ["HTTP/1.1 204\n\r\n", 204, "", []],
    // A line without a colon is a field with an empty value (nginx relays it).
    ["HTTP/1.1 200 OK\r\nFoo\r\n\r\n", 200, "OK", [["Foo", ""]]],
    // A control byte in a value: escaped (Deno's writer ends the process on
    // one); nginx relays it.
    [
      "HTTP/1.1 200 OK\r\nA: a\x01b\x7f\tc\r\nB: 1\r\n\r\n",
      200,
      "OK",
      [["A", "a%01b%7F\tc"], ["B", "1"]],
    ],
    ["HTTP/1.1 200 OK\r\nA: \x1b[31m\r\n\r\n", 200, "OK", [["A", "%1B[31m"]]],
    // Content-Type more than once: the last line's value, where the first
    // was (ngx_http_upstream_copy_content_type replaces it per line).
    [
      "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX: 1\r\ncontent-type: text/plain\r\n\r\n",
      200,
      "OK",
      [["content-type", "text/plain"], ["X", "1"]],
    ],
    [
      "HTTP/1.1 200 OK\r\nContent-Type: a\r\nContent-Type:\r\nCONTENT-TYPE: c\r\n\r\n",
      200,
      "OK",
      [["CONTENT-TYPE", "c"]],
    ],
  ];
  for (const [text, status, reason, fields] of ok) {
    await t.step(JSON.stringify(text), () => {
      const head = parseResponseHead(enc(text))!;
      strictEqual(head.status, status);
      strictEqual(head.reason, reason);
      deepStrictEqual(head.fields, fields);
      strictEqual(head.headLength, enc(text).length);
    });
  }
  strictEqual(parseResponseHead(enc("HTTP/1.1 200 OK\r\nA: 1\r\n")), null);
  await t.step("keeps every byte of a value, one char per byte", () => {
    // 0x80-0x9F are where windows-1252 (the "latin1" TextDecoder) differs;
    // E2 80 94 is a UTF-8 "—". 0xA0 and 0x85 are not whitespace in HTTP.
    const value = [0xe2, 0x80, 0x94, 0x9f, 0x81, 0xa0, 0x85];
    const head = parseResponseHead(
      new Uint8Array([
        ...enc("HTTP/1.1 200 OK\r\nX: "),
        ...value,
        ...enc("\r\n\r\n"),
      ]),
    )!;
    deepStrictEqual(head.fields, [["X", String.fromCharCode(...value)]]);
  });
  const bad: [string, RegExp][] = [
    ["SSH-2.0-OpenSSH\r\n\r\n", /^upstream sent no valid HTTP\/1\.0 header$/],
    ["garbage", /^upstream sent no valid HTTP\/1\.0 header$/],
    ["HTTP/2 200\r\n\r\n", /no valid HTTP\/1\.0 header/],
    ["HTTP/1.1 2000\r\n\r\n", /no valid HTTP\/1\.0 header/],
    ["HTTP/1.1 20\r\n\r\n", /no valid HTTP\/1\.0 header/],
    ["HTTP/1.1 2x0 OK\r\n\r\n", /no valid HTTP\/1\.0 header/],
    ["HTTP/1.10 200\r\n\r\n", /no valid HTTP\/1\.0 header/],
    ["HTTP/1.1  200\r\n\r\n", /no valid HTTP\/1\.0 header/],
    ["HTTP/1.1 200 O\rK\r\n\r\n", /no valid HTTP\/1\.0 header/],
    // nginx's text: the line up to the offending byte, then `\xhh...`
    // (ngx_http_proxy_process_header); seen from nginx 1.22.
    [
      "HTTP/1.1 200 OK\r\n: x\r\n\r\n",
      /^upstream sent invalid header: "\\x3a\.\.\."$/,
    ],
    [
      "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
      /^upstream sent invalid header: "Bad\\x20\.\.\."$/,
    ],
    [
      "HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n",
      /^upstream sent invalid header: "\\x20\.\.\."$/,
    ],
    // NUL and a bare CR inside a field line never reach the log raw.
    [
      "HTTP/1.1 200 OK\r\nA: 1\0x\r\n\r\n",
      /^upstream sent invalid header: "A: 1\\x00\.\.\."$/,
    ],
    [
      "HTTP/1.1 200 OK\r\nA: 1\rB\r\n\r\n",
      /^upstream sent invalid header: "A: 1\\x0d\.\.\."$/,
    ],
    [
      "HTTP/1.1 200 OK\r\nX\x01(: a\r\n\r\n",
      /^upstream sent invalid header: "X\\x01\.\.\."$/,
    ],
    // Not a token (nginx relays it; Headers cannot hold it): the whole line,
    // its control bytes escaped.
    [
      "HTTP/1.1 200 OK\r\nBad(N: a\x1bb\r\n\r\n",
      /^upstream sent invalid header: "Bad\(N: a\\x1Bb"$/,
    ],
  ];
  for (const [text, message] of bad) {
    await t.step(`rejects ${JSON.stringify(text)}`, () => {
      throws(
        () => parseResponseHead(enc(text)),
        (e: unknown) =>
          e instanceof InvalidResponseError && message.test(e.message),
      );
    });
  }
});

Deno.test("parseResponseHead() takes a head that fits proxy_buffer_size, as nginx", async (t) => {
  const head = (size: number) => {
    const start = "HTTP/1.1 200 OK\r\nX: ";
    return enc(`${start}${"a".repeat(size - start.length - 4)}\r\n\r\n`);
  };
  strictEqual(DEFAULT_HEAD_BUFFER, 4096);
  for (const [size, buffer] of [[4096, 4096], [1024, 1024], [8192, 8192]]) {
    await t.step(`${size} bytes in ${buffer}`, () => {
      strictEqual(parseResponseHead(head(size!), buffer)?.headLength, size);
    });
  }
  for (const [size, buffer] of [[4097, 4096], [10_000, 4096], [1025, 1024]]) {
    await t.step(`${size} bytes in ${buffer} is too big`, () => {
      throws(
        () => parseResponseHead(head(size!), buffer),
        /^InvalidResponseError: upstream sent too big header$/,
      );
      // Also while the head is still arriving: the buffer is full.
      throws(
        () => parseResponseHead(head(size!).subarray(0, buffer!), buffer),
        /too big header/,
      );
    });
  }
  strictEqual(parseResponseHead(head(4096).subarray(0, 4095)), null);
});
