/**
 * `sentHeadBytes()` and `framingField()` against what `Deno.serve` writes:
 * each row's response is served on 127.0.0.1 and read raw, and the head
 * rebuilt from the response and the request must be the head read, byte
 * for byte in size, with the same framing field.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  framingField,
  type SentBody,
  sentHeadBytes,
} from "../../src/log/mod.ts";

const bytes = (text: string, init?: ResponseInit) => new Response(text, init);
const stream = (text: string, init?: ResponseInit) =>
  new Response(ReadableStream.from([new TextEncoder().encode(text)]), init);

/** [name, the body's kind, the response] */
const RESPONSES: [string, SentBody, () => Response][] = [
  [
    "bytes with a length",
    "bytes",
    () => bytes("abc", { headers: { "content-length": "3", "x-a": "1" } }),
  ],
  [
    "stream with a length",
    "stream",
    () => stream("abc", { headers: { "content-length": "3" } }),
  ],
  ["stream", "stream", () => stream("abc")],
  ["stream with both framing fields", "stream", () =>
    stream("abc", {
      headers: { "content-length": "3", "transfer-encoding": "chunked" },
    })],
  ["bytes with Transfer-Encoding", "bytes", () =>
    bytes("abc", {
      headers: { "content-length": "3", "transfer-encoding": "chunked" },
    })],
  ["empty", "empty", () => new Response(null)],
  [
    "empty with a length",
    "empty",
    () => new Response(null, { headers: { "content-length": "3" } }),
  ],
  ["204", "empty", () => new Response(null, { status: 204 })],
  [
    "204 with a length",
    "empty",
    () =>
      new Response(null, { status: 204, headers: { "content-length": "0" } }),
  ],
  ["205", "empty", () => new Response(null, { status: 205 })],
  [
    "304",
    "empty",
    () => new Response(null, { status: 304, headers: { etag: '"e"' } }),
  ],
  [
    "499, no reason phrase",
    "bytes",
    () => bytes("x", { status: 499, headers: { "content-length": "1" } }),
  ],
  ["599, no reason phrase", "empty", () => new Response(null, { status: 599 })],
  ["its own date", "bytes", () =>
    bytes("x", {
      headers: {
        "content-length": "1",
        date: "Mon, 01 Jan 2024 00:00:00 GMT",
      },
    })],
  [
    "its own Connection",
    "bytes",
    () =>
      bytes("x", { headers: { "content-length": "1", connection: "close" } }),
  ],
  ["repeated fields and cookies", "bytes", () => {
    const headers = new Headers({ "content-length": "1" });
    headers.append("x-r", "1");
    headers.append("x-r", "22");
    headers.append("set-cookie", "a=1; Path=/");
    headers.append("set-cookie", "b=2");
    return bytes("x", { headers });
  }],
  [
    "latin1 value",
    "bytes",
    () => bytes("x", { headers: { "content-length": "1", "x-l": "caf\xe9" } }),
  ],
];

/** [name, the request's method, its Connection field] */
const REQUESTS: [string, string, string | null][] = [
  ["GET, close", "GET", "close"],
  ["GET, kept alive", "GET", null],
  ["GET, close among tokens", "GET", "TE, Close"],
  ["HEAD, close", "HEAD", "close"],
];

Deno.test("sentHeadBytes() and framingField() are the head Deno.serve writes", async () => {
  let make: () => Response = () => new Response(null);
  let made: Response | null = null;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => (made = make()),
  );
  const failures: string[] = [];
  for (const [name, body, response] of RESPONSES) {
    for (const [request, method, connection] of REQUESTS) {
      make = response;
      const head = await readHead(
        server.addr.port,
        `${method} / HTTP/1.1\r\nHost: t\r\n` +
          (connection === null ? "" : `Connection: ${connection}\r\n`) +
          "\r\n",
      );
      const sent = {
        status: made!.status,
        headers: made!.headers,
        body,
        head: method === "HEAD",
        connection,
      };
      const framing = framingField(sent);
      const read = /\r\n(content-length|transfer-encoding): *([^\r]*)/i
        .exec(head);
      const row = `${name}, ${request}`;
      if (sentHeadBytes(sent) !== head.length) {
        failures.push(`${row}: ${sentHeadBytes(sent)} for ${head.length}`);
      }
      deepStrictEqual(framing, read === null ? null : [read[1], read[2]], row);
    }
  }
  deepStrictEqual(failures, []);
});

/**
 * Sends a request and reads the response's head (up to its blank line) as
 * latin1, one character a byte; the body is left unread.
 */
async function readHead(port: number, request: string): Promise<string> {
  using conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(request));
  const buf = new Uint8Array(16 * 1024);
  let text = "";
  // Bounded: a head is a few hundred bytes, and the server closes a
  // connection it is asked to.
  for (let i = 0; i < 100 && !text.includes("\r\n\r\n"); i++) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder("latin1").decode(buf.subarray(0, n));
  }
  return text.slice(0, text.indexOf("\r\n\r\n") + 4);
}

Deno.test("sentHeadBytes() knows the reason phrase Deno.serve writes for every status from 200 to 599", async () => {
  let status = 200;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(null, { status }),
  );
  const failures: string[] = [];
  for (; status <= 599; status++) {
    const head = await readHead(
      server.addr.port,
      "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    const sent = {
      status,
      headers: new Headers(),
      body: "empty",
      head: false,
      connection: "close",
    } as const;
    if (sentHeadBytes(sent) !== head.length) {
      failures.push(head.slice(0, head.indexOf("\r\n")));
    }
  }
  deepStrictEqual(failures, []);
});
