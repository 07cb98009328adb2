/**
 * A request body buffered to a file, sent by tries that overlap (an early
 * answer leaves a try's write running while the next try starts): each
 * send reads the one open handle at its own position, over real loopback
 * connections.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BodyFile } from "../../src/upstream/body_file.ts";
import { type ConnectionIo, writeRequest } from "../../src/upstream/io.ts";
import { Connection } from "../../src/upstream/connection.ts";
import type { UpstreamCall } from "../../src/upstream/types.ts";
import { Watchdog } from "../../src/upstream/watchdog.ts";
import { loopbackPair, untilClosed } from "../_utils.ts";

/** 1 MiB, each 4 bytes its own offset: a shifted or short body shows. */
const SIZE = 1024 * 1024;
const BODY = (() => {
  const bytes = new Uint8Array(SIZE);
  const view = new DataView(bytes.buffer);
  for (let at = 0; at < SIZE; at += 4) view.setUint32(at, at);
  return bytes;
})();

/**
 * An open file holding {@linkcode BODY}, its position at the end (as the
 * body's writer leaves it); closed, then removed, when disposed.
 */
async function bodyFile(): Promise<{ file: Deno.FsFile } & Disposable> {
  const path = await Deno.makeTempFile({ prefix: "gw-body-file-" });
  const file = await Deno.open(path, { read: true, write: true });
  for (let at = 0; at < SIZE;) at += await file.write(BODY.subarray(at));
  return {
    file,
    [Symbol.dispose]: () => {
      file.close();
      Deno.removeSync(path);
    },
  };
}

function call(body: UpstreamCall["body"]): UpstreamCall {
  return {
    method: "PUT",
    path: "/up",
    host: "up",
    headers: [],
    body,
    signal: new AbortController().signal,
    onBodyError: () => {},
    onBodyWarning: () => {},
  };
}

/** Everything the upstream's side receives until the gateway's side closes. */
async function receiveAll(conn: Deno.Conn): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  const buf = new Uint8Array(64 * 1024);
  // Bounded: the writer closes its side when its send ends.
  for (let n; (n = await conn.read(buf).catch(() => null)) !== null;) {
    parts.push(buf.slice(0, n));
    total += n;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The body after the head, and the head's Content-Length. */
function split(bytes: Uint8Array): { length: string; body: Uint8Array } {
  const text = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  const end = text.indexOf("\r\n\r\n");
  return {
    length: /\r\nContent-Length: (\d+)/.exec(text)?.[1] ?? "(none)",
    body: bytes.subarray(end + 4),
  };
}

/** The first offset where two arrays differ, or -1. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

Deno.test("BodyFile.readAt() reads each position asked for, in any order and at once", async () => {
  using f = await bodyFile();
  const body = new BodyFile(f.file);
  const cases: [number, number][] = [
    [0, 16],
    [SIZE - 8, 8],
    [4096, 100],
    [4096 + 100, 100],
    [12, 4],
  ];
  const reads = await Promise.all(cases.map(async ([at, length]) => {
    const buf = new Uint8Array(length);
    const n = await body.readAt(buf, at);
    return [...buf.subarray(0, n ?? 0)];
  }));
  deepStrictEqual(
    reads,
    cases.map(([at, length]) => [...BODY.subarray(at, at + length)]),
  );
  strictEqual(await body.readAt(new Uint8Array(4), SIZE), null);
});

/**
 * How the first send ends while the second runs: read whole beside it,
 * or its connection closed after its upstream read some (an early answer,
 * a reset, a send timeout all close it).
 */
const FIRST_ENDS: ["whole" | "closed mid-body", number][] = [
  ["whole", SIZE],
  ["closed mid-body", 64 * 1024],
  ["closed mid-body", 300 * 1024],
];

for (const [ending, firstReads] of FIRST_ENDS) {
  Deno.test(`writeRequest(): two sends of one file body at once each send it whole (first ${ending} after ${firstReads} bytes)`, async () => {
    using f = await bodyFile();
    const body = {
      kind: "file" as const,
      file: new BodyFile(f.file),
      length: SIZE,
    };
    const io: ConnectionIo = {
      watchdog: new Watchdog(),
      timeouts: { connectMs: 5000, sendMs: 5000, readMs: 5000 },
    };
    try {
      await using one = await loopbackPair();
      await using two = await loopbackPair();
      const first = new Connection(one.client);
      // The first upstream reads part, then the first try's connection
      // closes under its running write (as the walk drops its answer).
      const firstSide = (async () => {
        const buf = new Uint8Array(64 * 1024);
        let got = 0;
        while (got < firstReads) {
          const n = await one.server.read(buf).catch(() => null);
          if (n === null) return got;
          got += n;
        }
        if (firstReads < SIZE) first.close();
        await untilClosed(one.server);
        return got;
      })();
      const firstSend = writeRequest(io, first, call(body)).then(
        () => first.close(),
        () => first.close(),
      );
      const second = new Connection(two.client);
      const received = receiveAll(two.server);
      await writeRequest(io, second, call(body));
      second.close();
      const { length, body: got } = split(await received);
      await firstSend;
      await firstSide;
      strictEqual(length, String(SIZE));
      strictEqual(got.length, SIZE);
      strictEqual(firstDifference(got, BODY), -1);
    } finally {
      io.watchdog.stop();
    }
  });
}
