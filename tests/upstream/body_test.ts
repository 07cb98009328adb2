import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { GcPacer } from "../../src/runtime/gc_pacer.ts";
import { type BodySource, streamBody } from "../../src/upstream/body.ts";
import { ClientWatch, Connection } from "../../src/upstream/connection.ts";
import { UpstreamError } from "../../src/upstream/error.ts";
import type { UpstreamCall } from "../../src/upstream/types.ts";
import { loopbackPair, writeText } from "../_utils.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function harness(onBodyError: (e: UpstreamError) => void = () => {}) {
  const released: Connection[] = [];
  const source: BodySource = {
    read: async (c) => {
      const buf = new Uint8Array(1024);
      const n = await c.conn.read(buf);
      return n === null ? null : buf.subarray(0, n);
    },
    release: (c) => released.push(c),
    gcPacer: new GcPacer({ collect: null }),
    family: "linux",
  };
  const call = {
    onBodyError,
    onBodyWarning: () => {},
  } as unknown as UpstreamCall;
  const watch = new ClientWatch(new AbortController().signal, 0);
  return { released, source, call, watch };
}

Deno.test("streamBody() reads the rest of the body as framed, and hands a reusable connection back", async (t) => {
  const cases: [
    string,
    { kind: "length"; length: number } | { kind: "chunked" } | {
      kind: "close";
    },
    rest: string,
    sent: string,
    body: string,
    released: boolean,
  ][] = [
    [
      "length",
      { kind: "length", length: 11 },
      "hello",
      " world",
      "hello world",
      true,
    ],
    [
      "chunked",
      { kind: "chunked" },
      "5\r\nhel",
      "lo\r\n0\r\n\r\n",
      "hello",
      true,
    ],
    ["until close", { kind: "close" }, "", "bye", "bye", false],
  ];
  for (const [name, framing, rest, sent, body, released] of cases) {
    await t.step(name, async () => {
      await using pair = await loopbackPair();
      const h = harness();
      const c = new Connection(pair.client);
      const stream = streamBody(c, {
        call: h.call,
        watch: h.watch,
        framing,
        rest: new TextEncoder().encode(rest),
        reusable: framing.kind !== "close",
      }, h.source);
      await writeText(pair.server, sent);
      if (framing.kind === "close") pair.server.close();
      // Bounded even if the framing were misread: the close ends the read.
      const guard = setTimeout(() => pair.server.close(), 2000);
      strictEqual(text(await new Response(stream).bytes()), body);
      clearTimeout(guard);
      deepStrictEqual(h.released, released ? [c] : []);
      strictEqual(c.closed, !released);
    });
  }
});

Deno.test("streamBody() fails on a premature close and tells the call", async () => {
  await using pair = await loopbackPair();
  const errors: UpstreamError[] = [];
  const h = harness((e) => errors.push(e));
  const c = new Connection(pair.client);
  const stream = streamBody(c, {
    call: h.call,
    watch: h.watch,
    framing: { kind: "length", length: 10 },
    rest: new Uint8Array(0),
    reusable: true,
  }, h.source);
  await writeText(pair.server, "abc");
  pair.server.close();
  await rejects(new Response(stream).bytes(), UpstreamError);
  strictEqual(errors.length, 1);
  strictEqual(errors[0]!.kind, "premature-close");
  strictEqual(errors[0]!.message, "upstream prematurely closed connection");
  strictEqual(c.closed, true);
  deepStrictEqual(h.released, []);
});

Deno.test("streamBody() reads on when a piece of a chunked body holds no data: the client gets the whole body", async (t) => {
  // Each read of the source returns the next piece, so the pieces come
  // apart exactly as listed (an upstream writing a chunk's size, its data
  // and its CRLF separately, or trailers after the last chunk). A pull
  // that enqueued nothing was never called again: the body stalled with
  // no read pending, so no timer could end it.
  const cases: [name: string, rest: string, pieces: string[], body: string][] =
    [
      ["size with the head", "5\r\n", ["hello\r\n0\r\n\r\n"], "hello"],
      ["size alone", "", ["5\r\n", "hello\r\n", "0\r\n\r\n"], "hello"],
      [
        "CRLF alone",
        "5\r\nhello",
        ["\r\n", "5\r\n", "world\r\n0\r\n\r\n"],
        "helloworld",
      ],
      ["last chunk alone", "5\r\nhello\r\n", ["0\r\n", "\r\n"], "hello"],
      [
        "trailers apart",
        "5\r\nhello\r\n0\r\n",
        ["X-T: 1\r\n", "\r\n"],
        "hello",
      ],
      ["extension, byte by byte", "", [..."3;x=y\r\nabc\r\n0\r\n\r\n"], "abc"],
    ];
  for (const [name, rest, pieces, body] of cases) {
    await t.step(name, async () => {
      await using pair = await loopbackPair();
      const h = harness();
      let next = 0;
      h.source.read = () => {
        const piece = pieces[next++];
        return Promise.resolve(
          piece === undefined ? null : new TextEncoder().encode(piece),
        );
      };
      const c = new Connection(pair.client);
      const stream = streamBody(c, {
        call: h.call,
        watch: h.watch,
        framing: { kind: "chunked" },
        rest: new TextEncoder().encode(rest),
        reusable: true,
      }, h.source);
      // Bounded: before the fix the read below never settled.
      const stalled = Promise.withResolvers<never>();
      const guard = setTimeout(
        () => stalled.reject(new Error(`stalled after ${next} reads`)),
        5000,
      );
      try {
        const got = await Promise.race([
          new Response(stream).bytes(),
          stalled.promise,
        ]);
        strictEqual(text(got), body);
      } finally {
        clearTimeout(guard);
      }
      strictEqual(next, pieces.length);
      deepStrictEqual(h.released, [c]);
    });
  }
});
