import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  serializeRequestHead,
  writeRequestHead,
} from "../../src/upstream/request_head.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("serializeRequestHead() writes request line, Host, framing, then fields", () => {
  const head = (
    framing: Parameters<typeof serializeRequestHead>[0]["framing"],
  ) =>
    dec(serializeRequestHead({
      method: "GET",
      path: "/a?b",
      host: "10.0.0.5:8080",
      headers: [["cookie", "a=1"]],
      framing,
    }));
  strictEqual(
    head({ kind: "none" }),
    "GET /a?b HTTP/1.1\r\nHost: 10.0.0.5:8080\r\ncookie: a=1\r\n\r\n",
  );
  strictEqual(
    head({ kind: "chunked" }),
    "GET /a?b HTTP/1.1\r\nHost: 10.0.0.5:8080\r\nTransfer-Encoding: chunked\r\ncookie: a=1\r\n\r\n",
  );
  strictEqual(
    head({ kind: "length", length: 0 }),
    "GET /a?b HTTP/1.1\r\nHost: 10.0.0.5:8080\r\nContent-Length: 0\r\ncookie: a=1\r\n\r\n",
  );
});

Deno.test("serializeRequestHead() and writeRequestHead() keep the client's bytes", async (t) => {
  // Deno.serve gives the target decoded from UTF-8 and header values as
  // ByteStrings (one char per byte); both must leave as the bytes received.
  const options = {
    method: "GET",
    path: "/caf\u00e9/\u6587",
    host: "h",
    headers: [["x-name", "\u00c3\u00a9\u00ff"]] as [string, string][],
    framing: { kind: "none" as const },
  };
  const expected = [
    ...enc("GET /caf\u00e9/\u6587 HTTP/1.1\r\nHost: h\r\nx-name: "),
    0xc3,
    0xa9,
    0xff,
    ...enc("\r\n\r\n"),
  ];
  await t.step("serializeRequestHead()", () => {
    deepStrictEqual([...serializeRequestHead(options)], expected);
  });
  await t.step("writeRequestHead() into a larger buffer", () => {
    const into = new Uint8Array(256).fill(0x2a);
    const n = writeRequestHead(options, into);
    strictEqual(n, expected.length);
    deepStrictEqual([...into.subarray(0, n)], expected);
  });
  await t.step("writeRequestHead() at every size too small, and exact", () => {
    for (let size = 0; size < expected.length; size++) {
      strictEqual(
        writeRequestHead(options, new Uint8Array(size)),
        -1,
        `${size}`,
      );
    }
    const exact = new Uint8Array(expected.length);
    strictEqual(writeRequestHead(options, exact), expected.length);
    deepStrictEqual([...exact], expected);
  });
});

Deno.test("serializeRequestHead() writes a location's version and leading fields in place of Host", () => {
  const head = dec(serializeRequestHead({
    method: "POST",
    path: "/x",
    host: "unused",
    version: "1.0",
    leading: [["X-Real-IP", "10.0.0.1"], ["Host", "backend"], [
      "Connection",
      "close",
    ]],
    headers: [["accept", "*/*"]],
    framing: { kind: "length", length: 2 },
  }));
  strictEqual(
    head,
    "POST /x HTTP/1.0\r\nX-Real-IP: 10.0.0.1\r\nHost: backend\r\nConnection: close\r\nContent-Length: 2\r\naccept: */*\r\n\r\n",
  );
});
