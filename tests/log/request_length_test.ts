import { deepStrictEqual } from "node:assert/strict";
import {
  COMBINED,
  compileLogFormat,
  joinedFieldLines,
  requestHeadBytes,
} from "../../src/log/mod.ts";

/** [request line, field lines (`null`: none read), the head's bytes as sent] */
const HEADS: [string, [string, string][] | null, string][] = [
  ["GET / HTTP/1.1", [], "GET / HTTP/1.1\r\n\r\n"],
  ["GET / HTTP/1.1", [["Host", "t"]], "GET / HTTP/1.1\r\nHost: t\r\n\r\n"],
  // A name on two lines counts twice; letter case is as sent.
  [
    "POST /api/x?a=1 HTTP/1.1",
    [["HOST", "t"], ["x-a", "1"], ["X-A", "22"], ["Content-Length", "5"]],
    "POST /api/x?a=1 HTTP/1.1\r\nHOST: t\r\nx-a: 1\r\nX-A: 22\r\n" +
    "Content-Length: 5\r\n\r\n",
  ],
  // An empty value still has its `: ` and CRLF.
  ["GET / HTTP/1.1", [["X-Empty", ""]], "GET / HTTP/1.1\r\nX-Empty: \r\n\r\n"],
  // A value's bytes above 0x7f are one character each (a ByteString).
  [
    "GET / HTTP/1.1",
    [["X-B", "\xe9\xe9"]],
    "GET / HTTP/1.1\r\nX-B: ..\r\n\r\n",
  ],
  // A target decoded to text other than ASCII is counted in UTF-8.
  ["GET /é HTTP/1.1", [], "GET /.. HTTP/1.1\r\n\r\n"],
  // Refused at its request line: that line alone.
  ["GET / HTTP/1.1", null, "GET / HTTP/1.1\r\n"],
];

Deno.test("requestHeadBytes() counts the request line, each field line and the blank line as sent", () => {
  const got = HEADS.map(([line, fields]) => requestHeadBytes(line, fields));
  deepStrictEqual(got, HEADS.map(([, , sent]) => sent.length));
});

Deno.test("joinedFieldLines() lists a request's fields as lines", () => {
  deepStrictEqual(
    joinedFieldLines(new Headers([["A", "1"], ["b", "2"], ["a", "3"]])),
    [["a", "1, 3"], ["b", "2"]],
  );
});

/** [format text, it names `$request_length`] */
const FORMATS: [string, boolean][] = [
  ["$remote_addr $status", false],
  ["$request_length", true],
  ["${request_length}b", true],
  ["$REQUEST_LENGTH", true],
  ["$request $bytes_sent", false],
  ["$http_request_length", false],
];

Deno.test("a log_format that names $request_length says so, and only then", () => {
  const got = FORMATS.map(([text]) => {
    const compiled = compileLogFormat("t", [text]);
    if (!compiled.ok) return compiled.error;
    return compiled.format.readsLength;
  });
  deepStrictEqual(got, FORMATS.map(([, names]) => names));
  deepStrictEqual(COMBINED.readsLength, false);
});
