/**
 * A request body buffered to a temporary file (past
 * `client_body_buffer_size`) sent again to the next server after the first
 * try ended early: the first server answered 502 mid-body, reset the
 * connection mid-body, or stopped reading until `proxy_send_timeout`. The
 * first try's write may still be running when the next try starts reading
 * the same file; the next server must get the body byte-exact, with its
 * `Content-Length`, and the file must be gone when the request ends. The
 * same file sent to `fastcgi_pass` as STDIN. The overlap of two sends
 * itself is pinned in `upstream/body_file_test.ts`: here the first try's
 * connection closes before the next try starts, so these pass with a
 * shared position too; they hold the class of early endings.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  onFreePort,
  startRawUpstream,
  untilClosed,
  waitFor,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { nginxPrefix } from "../_prefix.ts";
import { startFastcgiResponder } from "../_fastcgi_responder.ts";

/** 2 MiB, each 4 bytes its own offset: a shifted or short body shows. */
const SIZE = 2 * 1024 * 1024;
const BODY = (() => {
  const bytes = new Uint8Array(SIZE);
  const view = new DataView(bytes.buffer);
  for (let at = 0; at < SIZE; at += 4) view.setUint32(at, at);
  return bytes;
})();

/** How the first server ends its try. */
type Ending =
  | "early 502, then drains"
  | "early 502"
  | "reset"
  | "stops reading (timeout)";

/** What the first server reads of the body before it ends the try. */
const READ_FIRST = 256 * 1024;

/**
 * Reads a request head and the body bytes after it, `want(head)` of them
 * (or to the end of the stream).
 */
async function readPart(
  conn: Deno.Conn,
  want: (head: string) => number,
): Promise<{ head: string; body: Uint8Array } | null> {
  const buf = new Uint8Array(64 * 1024);
  let bytes = new Uint8Array(0);
  let head: string | null = null;
  let bodyAt = 0;
  let wanted = 0;
  // Bounded by the body's size: each read brings at least a byte.
  while (head === null || bytes.length - bodyAt < wanted) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    const joined = new Uint8Array(bytes.length + n);
    joined.set(bytes);
    joined.set(buf.subarray(0, n), bytes.length);
    bytes = joined;
    if (head === null) {
      const end = new TextDecoder("latin1").decode(bytes).indexOf("\r\n\r\n");
      if (end === -1) continue;
      head = new TextDecoder("latin1").decode(bytes.subarray(0, end));
      bodyAt = end + 4;
      wanted = want(head);
    }
  }
  if (head === null) return null;
  return { head, body: bytes.subarray(bodyAt) };
}

const BAD_GATEWAY =
  "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbad";

/** The first server: reads part of the body, then ends the try its way. */
function firstServer(ending: Ending) {
  return startRawUpstream(async (conn, _i, up) => {
    if (await readPart(conn, () => READ_FIRST) === null) return;
    const write = (text: string) =>
      conn.write(new TextEncoder().encode(text)).catch(() => 0);
    switch (ending) {
      case "early 502, then drains":
        await write(BAD_GATEWAY);
        // Reads on, so the gateway's write of this try can keep going.
        return await untilClosed(conn);
      case "early 502":
        await write(BAD_GATEWAY);
        return await up.disposed;
      case "reset":
        // Closed with the body unread: Linux answers the next segment
        // with a reset.
        return;
      case "stops reading (timeout)":
        // Reads nothing more until the gateway gives up.
        return await up.disposed;
    }
  });
}

/** What the second server got: the head, the body, bytes past its length. */
interface Got {
  head: string;
  body: Uint8Array;
  extra: number;
}

/** The second server: records every byte it receives, answers 200. */
function secondServer(into: Got[]) {
  return startRawUpstream(async (conn) => {
    const length = (head: string) =>
      Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? "0");
    const request = await readPart(conn, length);
    if (request === null) return;
    const size = length(request.head);
    await conn.write(
      new TextEncoder().encode(
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
      ),
    );
    // Anything after the declared body, until the gateway closes.
    let extra = request.body.length - size;
    const buf = new Uint8Array(64 * 1024);
    for (let n; (n = await conn.read(buf).catch(() => null)) !== null;) {
      extra += n;
    }
    into.push({ head: request.head, body: request.body.slice(0, size), extra });
  });
}

const ENDINGS: Ending[] = [
  "early 502, then drains",
  "early 502",
  "reset",
  "stops reading (timeout)",
];

for (const ending of ENDINGS) {
  Deno.test(`a body in a temporary file reaches the next server whole: first try ${ending}`, async () => {
    await using first = firstServer(ending);
    const timeout = ending === "stops reading (timeout)" ? "1s" : "60s";
    const got: Got[] = [];
    await using second = secondServer(got);
    await using temp = await tempFolder();
    await using p = await nginxPrefix((prefix) =>
      `events {}
http {
  error_log ${join(prefix, "logs", "error.log")};
  access_log off;
  client_body_temp_path ${temp.path};
  client_max_body_size 0;
  upstream two {
    server 127.0.0.1:${first.port} max_fails=0;
    server 127.0.0.1:${second.port} backup;
  }
  server {
    listen 127.0.0.1:PORT;
    location / {
      proxy_pass http://two;
      proxy_next_upstream error timeout http_502 non_idempotent;
      # Only the stalled first try is ended by a timer (its send's, or its
      # read's once the socket took the body); on a loaded host a 1 s timer
      # could end the other rows' exchanges too (a 504).
      proxy_send_timeout ${timeout};
      proxy_read_timeout ${timeout};
    }
  }
}`
    );
    const text = await Deno.readTextFile(p.conf);
    await using gw = await onFreePort(async (port) => {
      await Deno.writeTextFile(p.conf, text.replace("PORT", String(port)));
      return await startMain(["--nginx-conf", p.conf]);
    });
    const res = await fetch(`http://127.0.0.1:${gw.port}/up`, {
      method: "POST",
      body: BODY,
    });
    strictEqual(res.status, 200);
    strictEqual(await res.text(), "ok");
    // Recorded once the gateway closed the second server's connection.
    await waitFor(() => got.length === 1);
    const { head, body, extra } = got[0]!;
    strictEqual(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1], String(SIZE));
    strictEqual(/transfer-encoding/i.test(head), false);
    strictEqual(body.length, SIZE);
    strictEqual(firstDifference(body, BODY), -1);
    strictEqual(extra, 0);
    deepStrictEqual(await Array.fromAsync(Deno.readDir(temp.path)), []);
  });
}

/** The first offset where two arrays differ, or -1. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** A temporary folder, removed when disposed. */
async function tempFolder(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "gw-body-retry-" });
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }),
  };
}

Deno.test("a body in a temporary file reaches fastcgi_pass as STDIN byte-exact", async () => {
  await using responder = startFastcgiResponder({ plain: "ok" });
  await using temp = await tempFolder();
  await using p = await nginxPrefix((prefix) =>
    `events {}
http {
  error_log ${join(prefix, "logs", "error.log")};
  access_log off;
  client_body_temp_path ${temp.path};
  client_max_body_size 0;
  server {
    listen 127.0.0.1:PORT;
    location / {
      fastcgi_pass 127.0.0.1:${responder.port};
      fastcgi_param CONTENT_LENGTH $content_length;
    }
  }
}`
  );
  const text = await Deno.readTextFile(p.conf);
  await using gw = await onFreePort(async (port) => {
    await Deno.writeTextFile(p.conf, text.replace("PORT", String(port)));
    return await startMain(["--nginx-conf", p.conf]);
  });
  const res = await fetch(`http://127.0.0.1:${gw.port}/up.php`, {
    method: "POST",
    body: BODY,
  });
  strictEqual(res.status, 200);
  strictEqual(await res.text(), "ok");
  strictEqual(responder.seen.length, 1);
  const seen = responder.seen[0]!;
  strictEqual(
    seen.params.find(([name]) => name === "CONTENT_LENGTH")?.[1],
    String(SIZE),
  );
  // The responder reads the body as latin1 text; so is it compared.
  strictEqual(seen.body.length, SIZE);
  strictEqual(seen.body === new TextDecoder("latin1").decode(BODY), true);
  deepStrictEqual(await Array.fromAsync(Deno.readDir(temp.path)), []);
});
