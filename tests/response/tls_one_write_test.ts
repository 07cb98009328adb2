import { strictEqual } from "node:assert/strict";
import {
  framedInOnePiece,
  ONE_WRITE_FIELD,
  writeInOnePiece,
} from "../../src/response/mod.ts";

/** A response with `fields` and a body of `length` bytes. */
function answer(
  status: number,
  length: number | null,
  fields: Record<string, string> = {},
): Response {
  const body = status === 204 || status === 304
    ? null
    : ReadableStream.from([new Uint8Array(length ?? 10)]);
  return new Response(body, {
    status,
    headers: length === null
      ? fields
      : { ...fields, "content-length": String(length) },
  });
}

Deno.test("writeInOnePiece() asks for chunked framing for every response with a body", () => {
  const cases: [string, string, Response, string | null][] = [
    ["a page", "GET", answer(200, 2048), "chunked"],
    ["an error page", "GET", answer(404, 600), "chunked"],
    ["a small answer", "POST", answer(200, 40), "chunked"],
    ["no length", "GET", answer(200, null), "chunked"],
    ["an empty body", "GET", answer(200, 0), null],
    ["HEAD", "HEAD", answer(200, 2048), null],
    ["204", "GET", answer(204, null), null],
    ["304", "GET", answer(304, null), null],
  ];
  for (const [name, method, response, expected] of cases) {
    writeInOnePiece(method, response);
    strictEqual(response.headers.get("transfer-encoding"), expected, name);
    // The length stays for the access log; Deno does not send it.
    if (expected !== null && name !== "no length") {
      strictEqual(response.headers.has("content-length"), true, name);
    }
  }
  // Fields that cannot change are left as they are, without a throw.
  const redirect = Response.redirect("https://localhost/x", 302);
  writeInOnePiece("GET", redirect);
  strictEqual(redirect.headers.get("transfer-encoding"), null);
});

Deno.test("writeInOnePiece() leaves a response made with the framing in its fields as it is", () => {
  const fields: [string, string][] = [
    ["content-type", "text/html"],
    ["content-length", "2048"],
    [...ONE_WRITE_FIELD],
  ];
  const made = new Response(new Uint8Array(2048), { headers: fields });
  framedInOnePiece(made);
  writeInOnePiece("GET", made);
  strictEqual(made.headers.get("transfer-encoding"), "chunked");
  // Marked only: a mark is what is honoured, the fields are not read.
  const marked = answer(200, 2048);
  framedInOnePiece(marked);
  writeInOnePiece("GET", marked);
  strictEqual(marked.headers.get("transfer-encoding"), null);
});
