import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { parseResponseHead } from "../../src/upstream/http1.ts";
import { InvalidResponseError } from "../../src/upstream/field_line_parser.ts";
import {
  keepsAlive,
  responseFraming,
  transferEncodingOf,
} from "../../src/upstream/response_framing.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("responseFraming() escapes a bad length in its message", () => {
  throws(
    () =>
      responseFraming(
        parseResponseHead(
          enc("HTTP/1.1 200 OK\r\nContent-Length: 1\x01\r\n\r\n"),
        )!,
        "GET",
      ),
    /^InvalidResponseError: upstream sent invalid "Content-Length" header: "Content-Length: 1\\x01"$/,
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

Deno.test("transferEncodingOf() joins every Transfer-Encoding field, any case", () => {
  strictEqual(transferEncodingOf([["Content-Length", "5"]]), undefined);
  strictEqual(
    transferEncodingOf([
      ["TRANSFER-ENCODING", "gzip"],
      ["Content-Length", "5"],
      ["transfer-encoding", "chunked"],
    ]),
    "gzip, chunked",
  );
});
