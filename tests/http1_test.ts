import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  InvalidResponseError,
  keepsAlive,
  MAX_RESPONSE_HEAD,
  parseResponseHead,
  responseFraming,
} from "../src/http1.ts";

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
    ["HTTP/1.1 200 OK\r\n: x\r\n\r\n", /^upstream sent invalid header: ": x"$/],
    [
      "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
      /^upstream sent invalid header: "Bad Name: x"$/,
    ],
    [
      "HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n",
      /^upstream sent invalid header: " folded"$/,
    ],
    // NUL, a bare LF and a bare CR inside a field line.
    [
      "HTTP/1.1 200 OK\r\nA: 1\0x\r\n\r\n",
      /^upstream sent invalid header: "A: 1\0x"$/,
    ],
    [
      "HTTP/1.1 200 OK\r\nA: 1\nB: 2\r\n\r\n",
      /^upstream sent invalid header: "A: 1\nB: 2"$/,
    ],
    [
      "HTTP/1.1 200 OK\r\nA: 1\rB\r\n\r\n",
      /^upstream sent invalid header: "A: 1\rB"$/,
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
  throws(
    () =>
      parseResponseHead(
        enc(`HTTP/1.1 200 OK\r\nX: ${"a".repeat(MAX_RESPONSE_HEAD)}`),
      ),
    /too big header/,
  );
});

Deno.test("responseFraming() follows RFC 9112 §6.3", async (t) => {
  const head = (status: number, fields: [string, string][]) => ({
    version: "HTTP/1.1",
    status,
    reason: "",
    fields,
    headLength: 0,
  });
  const cases: [string, ReturnType<typeof head>, string, unknown][] = [
    ["length", head(200, [["Content-Length", "5"]]), "GET", {
      kind: "length",
      length: 5,
    }],
    [
      "chunked wins over length",
      head(200, [["Content-Length", "5"], ["Transfer-Encoding", "chunked"]]),
      "GET",
      { kind: "chunked" },
    ],
    [
      "gzip, chunked",
      head(200, [["Transfer-Encoding", "gzip, chunked"]]),
      "GET",
      { kind: "chunked" },
    ],
    ["no framing: until close", head(200, []), "GET", { kind: "close" }],
    ["HEAD", head(200, [["Content-Length", "5"]]), "HEAD", { kind: "none" }],
    ["204", head(204, []), "GET", { kind: "none" }],
    ["304", head(304, [["Content-Length", "5"]]), "GET", { kind: "none" }],
    [
      "equal duplicates",
      head(200, [["Content-Length", "5"], ["content-length", "5"]]),
      "GET",
      { kind: "length", length: 5 },
    ],
  ];
  for (const [name, h, method, expected] of cases) {
    await t.step(
      name,
      () => deepStrictEqual(responseFraming(h, method), expected),
    );
  }
  throws(
    () =>
      responseFraming(
        head(200, [["Content-Length", "5"], ["Content-Length", "6"]]),
        "GET",
      ),
    InvalidResponseError,
  );
  throws(
    () => responseFraming(head(200, [["Content-Length", "-1"]]), "GET"),
    InvalidResponseError,
  );
});

Deno.test("keepsAlive() keeps HTTP/1.1 unless told to close", () => {
  const h = (version: string, fields: [string, string][]) => ({
    version,
    status: 200,
    reason: "",
    fields,
    headLength: 0,
  });
  strictEqual(keepsAlive(h("HTTP/1.1", [])), true);
  strictEqual(keepsAlive(h("HTTP/1.1", [["Connection", "Close"]])), false);
  strictEqual(keepsAlive(h("HTTP/1.0", [])), false);
});
