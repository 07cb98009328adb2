/**
 * The CGI response head as nginx's `ngx_http_fastcgi_process_header`
 * reads it, as a table: the status from `Status:`, 302 for a `Location:`
 * without one, 200 otherwise; an empty head; bare LF lines; a head not yet
 * whole; the lines and statuses nginx refuses, with its words.
 */
import { deepStrictEqual, throws } from "node:assert/strict";
import { parseCgiHead } from "../../src/fastcgi/mod.ts";

const enc = new TextEncoder();

const HEADS: [string, string, [number, string, number] | null][] = [
  // [what, stdout so far, [status, reason, head length] or null for more]
  ["no fields", "\r\nbody", [200, "OK", 2]],
  ["a bare LF", "\nbody", [200, "OK", 1]],
  ["Status with a reason", "Status: 404 Not Found\r\n\r\n", [
    404,
    "Not Found",
    25,
  ]],
  ["Status without a reason", "Status: 500\r\n\r\n", [500, "", 15]],
  ["Status in any case", "status: 201 Made\n\n", [201, "Made", 18]],
  ["Location without Status", "Location: /x\r\n\r\n", [
    302,
    "Moved Temporarily",
    16,
  ]],
  ["Location with Status", "Status: 301\r\nLocation: /x\r\n\r\n", [
    301,
    "",
    29,
  ]],
  ["more needed", "Content-Type: text/html\r\n", null],
  ["one byte", "C", null],
  ["a lone CR", "\r", null],
];

Deno.test("parseCgiHead() reads the status as nginx does", () => {
  for (const [what, text, want] of HEADS) {
    const head = parseCgiHead(enc.encode(text));
    deepStrictEqual(
      head === null ? null : [head.status, head.reason, head.headLength],
      want,
      what,
    );
  }
});

Deno.test("parseCgiHead() keeps the fields as sent, Status among them", () => {
  const head = parseCgiHead(
    enc.encode("Status: 200 OK\r\nX-A:  1 \r\nSet-Cookie: a=1\r\n\r\n"),
  );
  deepStrictEqual(head?.fields, [
    ["Status", "200 OK"],
    ["X-A", "1"],
    ["Set-Cookie", "a=1"],
  ]);
});

Deno.test("parseCgiHead() keeps one Content-Type, the last line's (the one field-line parser)", () => {
  const head = parseCgiHead(
    enc.encode(
      "Content-Type: text/html\r\nStatus: 200\r\nContent-Type: text/plain\r\n\r\n",
    ),
  );
  deepStrictEqual(head?.fields, [
    ["Content-Type", "text/plain"],
    ["Status", "200"],
  ]);
});

const REFUSED: [string, string, string][] = [
  [
    "a status that is no number",
    "Status: abc\r\n\r\n",
    'upstream sent invalid status "abc"',
  ],
  [
    "a status of two digits",
    "Status: 20\r\n\r\n",
    'upstream sent invalid status "20"',
  ],
  [
    "a space in a name",
    "X A: 1\r\n\r\n",
    'upstream sent invalid header: "X\\x20..."',
  ],
  [
    "NUL in a value",
    "X: a\0b\r\n\r\n",
    'upstream sent invalid header: "X: a\\x00..."',
  ],
];

Deno.test("parseCgiHead() refuses what nginx refuses, in its words", () => {
  for (const [what, text, message] of REFUSED) {
    throws(() => parseCgiHead(enc.encode(text)), { message }, what);
  }
});
