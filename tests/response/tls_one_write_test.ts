import { strictEqual } from "node:assert/strict";
import { DENO_WRITE_BUFFER, writeInOnePiece } from "../../src/response/mod.ts";

/** A response with `fields` and a body of `length` bytes (stated). */
function answer(
  status: number,
  length: number | null,
  fields: Record<string, string> = {},
): Response {
  const body = status === 204 || status === 304
    ? null
    : "x".repeat(length ?? 10);
  return new Response(body, {
    status,
    headers: length === null
      ? fields
      : { ...fields, "content-length": String(length) },
  });
}

Deno.test("writeInOnePiece() asks for chunked framing exactly when the head could go out alone", () => {
  const cookie = "c=" + "v".repeat(300);
  const cases: [string, string, Response, string | null][] = [
    ["a page past the buffer", "GET", answer(200, 2048), "chunked"],
    ["an error page past it", "GET", answer(404, 600), "chunked"],
    [
      "a body as large as the buffer",
      "GET",
      answer(200, DENO_WRITE_BUFFER),
      "chunked",
    ],
    [
      "a small answer",
      "POST",
      answer(200, 40, { "content-type": "application/json" }),
      null,
    ],
    [
      "a small answer behind a large head",
      "GET",
      answer(200, 40, { "set-cookie": cookie }),
      "chunked",
    ],
    [
      "a length that is not a number",
      "GET",
      answer(200, null, { "content-length": "x" }),
      "chunked",
    ],
    [
      "no length (a stream, or bytes Deno measures)",
      "GET",
      answer(200, null),
      "chunked",
    ],
    ["an empty body", "GET", answer(200, 0), null],
    ["HEAD", "HEAD", answer(200, 2048), null],
    ["204", "GET", answer(204, null), null],
    ["304", "GET", answer(304, null), null],
  ];
  for (const [name, method, response, expected] of cases) {
    writeInOnePiece(method, response);
    strictEqual(response.headers.get("transfer-encoding"), expected, name);
  }
  // Fields that cannot change are left as they are, without a throw.
  const redirect = Response.redirect("https://localhost/x", 302);
  writeInOnePiece("GET", redirect);
  strictEqual(redirect.headers.get("transfer-encoding"), null);
});
