/**
 * A chunked request body of tens of thousands of one-byte chunks costs the
 * gateway per byte, not per piece: `Deno.serve` hands over each chunk as a
 * piece of its own, and the gateway gathers them into blocks before it
 * writes them to the body's temporary file (`proxy_request_buffering on`),
 * or, streamed on as it comes (`off`), into one write of what came while
 * the last was under way, to an HTTP server or as FastCGI records.
 * Measured on a gateway process of its own (`/proc/PID/io` and
 * `/proc/PID/stat`), for what only a process shows: the write system calls
 * and CPU of everything it runs. Two processes: request buffering is one
 * setting for the whole gateway.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  readHead,
  readRequest,
  spawnGateway,
  startRawUpstream,
  waitFor,
} from "../_utils.ts";
import { nginxPrefix } from "../_prefix.ts";
import { startFastcgiResponder } from "../_fastcgi_responder.ts";

/** Chunks sent: 60,000 bytes of body, 360,005 bytes of framing and data. */
const CHUNKS = 60_000;

/**
 * Write system calls the gateway may make for one such request: the file's
 * writes (a block of 64 KiB or more at a time), the upstream's and the
 * client's, the logs. A write per piece made over 100,000.
 */
const MAX_WRITES = 1_000;

/**
 * CPU seconds one such request may cost the gateway, generous for a shared
 * machine: 0.3 s measured with the pieces gathered, 2 to 3 s with a copy
 * and a file write per piece.
 */
const MAX_CPU_S = 1.5;

/**
 * The same for a body streamed on as it comes: 0.2 s measured gathered;
 * 0.5 s with a write per piece to an HTTP upstream, more to FastCGI
 * (a new 64 KiB buffer per piece). The pieces the upstream counts are
 * the sharper proof: 60,000 before, a few hundred gathered.
 */
const MAX_STREAMED_CPU_S = 1;

/** The body: letters, so a byte out of place shows. */
function letters(n: number): Uint8Array {
  return new Uint8Array(n).map((_, i) => 97 + i % 26);
}

/** The body framed as one-byte chunks and the last chunk (RFC 9112 §7.1). */
function oneByteChunks(body: Uint8Array): Uint8Array {
  const framed = new Uint8Array(body.length * 6 + 5);
  for (let i = 0; i < body.length; i++) {
    framed.set([0x31, 13, 10, body[i]!, 13, 10], i * 6);
  }
  framed.set(new TextEncoder().encode("0\r\n\r\n"), body.length * 6);
  return framed;
}

/** Reads a file of `/proc/PID` (through `cat`: Deno reads `/proc` only under --allow-all). */
async function proc(pid: number, name: string): Promise<string> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/${name}`] })
    .output();
  return new TextDecoder().decode(out.stdout);
}

/** The process's write system calls and CPU seconds (user and system) so far. */
async function cost(pid: number): Promise<{ writes: number; cpu: number }> {
  const writes = Number((await proc(pid, "io")).match(/syscw: (\d+)/)![1]);
  const stat = await proc(pid, "stat");
  // Fields after the command's name: utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { writes, cpu: ticks / 100 };
}

/** POSTs `framed` on a raw socket; the answer's status line. */
async function post(
  port: number,
  framed: Uint8Array,
  path = "/api/upload",
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\n` +
      "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
  ));
  // Written while the answer is read: the gateway answers once all came.
  const writing = (async () => {
    for (let at = 0; at < framed.length;) {
      at += await conn.write(framed.subarray(at));
    }
  })();
  // Bounded: the gateway closes the connection after its answer.
  const text = await new Response(conn.readable).text();
  await writing;
  return text.slice(0, text.indexOf("\r\n"));
}

Deno.test(
  "a chunked body of 60,000 one-byte chunks goes to its temporary file a block at a time, whole, in bounded CPU",
  {
    ignore: Deno.build.os !== "linux",
  },
  async () => {
    const dir = await Deno.makeTempDir();
    await using _dir = {
      [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
    };
    const bodies: string[] = [];
    await using up = startRawUpstream(async (conn) => {
      const request = await readRequest(conn);
      if (request === null) return;
      bodies.push(request.body);
      await conn.write(new TextEncoder().encode(
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
      ));
    });
    await using gw = await spawnGateway([
      "--listen",
      "127.0.0.1:0",
      "--upstream",
      up.origin,
      "--error-log",
      `${dir}/error.log`,
      "--error-log-level",
      "warn",
      "--access-log",
      `${dir}/access.log`,
      "--client-max-body-size",
      "1m",
      "--client-body-temp-path",
      `${dir}/client_body_temp`,
    ]);
    // A first body warms the gateway (its compiler, the temporary folder).
    const warm = letters(20_000);
    strictEqual(await post(gw.port, oneByteChunks(warm)), "HTTP/1.1 200 OK");

    const body = letters(CHUNKS);
    const framed = oneByteChunks(body);
    const before = await cost(gw.child.pid);
    strictEqual(await post(gw.port, framed), "HTTP/1.1 200 OK");
    const after = await cost(gw.child.pid);

    deepStrictEqual(bodies, [
      new TextDecoder().decode(warm),
      new TextDecoder().decode(body),
    ]);
    // The [warn] line of each body's file (written as the file is made).
    let warns: string[] = [];
    await waitFor(() => {
      let log = "";
      try {
        log = Deno.readTextFileSync(`${dir}/error.log`);
      } catch { /* not written yet */ }
      warns = log.split("\n").filter((l) => l.includes("temporary file"));
      return warns.length === 2;
    });
    match(
      warns[1]!,
      /\[warn\] .*a client request body is buffered to a temporary file /,
    );
    const writes = after.writes - before.writes;
    const cpu = after.cpu - before.cpu;
    ok(writes < MAX_WRITES, `${writes} write system calls`);
    ok(cpu < MAX_CPU_S, `${cpu.toFixed(2)} s of CPU`);
  },
);

/**
 * Reads a request's body after its head: by its Content-Length, or its
 * chunked framing decoded. Returns the body and how many chunks it came in.
 */
async function readBody(
  conn: Deno.Conn,
): Promise<{ body: string; chunks: number } | null> {
  const head = await readHead(conn);
  if (head === null) return null;
  const latin1 = new TextDecoder("latin1");
  let text = head.slice(head.indexOf("\r\n\r\n") + 4);
  const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
  const done = () =>
    length !== undefined
      ? text.length >= Number(length)
      : text === "0\r\n\r\n" || text.endsWith("\r\n0\r\n\r\n");
  const buf = new Uint8Array(64 * 1024);
  // Bounded: the gateway sends the whole body, or closes.
  while (!done()) {
    const n = await conn.read(buf);
    if (n === null) return null;
    text += latin1.decode(buf.subarray(0, n));
  }
  if (length !== undefined) return { body: text, chunks: 1 };
  let body = "";
  let chunks = 0;
  for (let at = 0;;) {
    const eol = text.indexOf("\r\n", at);
    const size = parseInt(text.slice(at, eol), 16);
    if (size === 0) break;
    body += text.slice(eol + 2, eol + 2 + size);
    chunks++;
    at = eol + 2 + size + 2;
  }
  return { body, chunks };
}

Deno.test(
  "a body of 60,000 one-byte chunks streamed on (proxy_request_buffering off) goes in gathered writes, to HTTP and FastCGI, in bounded CPU",
  {
    ignore: Deno.build.os !== "linux",
  },
  async (t) => {
    const bodies: { body: string; chunks: number }[] = [];
    await using up = startRawUpstream(async (conn) => {
      const request = await readBody(conn);
      if (request === null) return;
      bodies.push(request);
      await conn.write(new TextEncoder().encode(
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
      ));
    });
    await using fcgi = startFastcgiResponder({ plain: "ok" });
    await using p = await nginxPrefix((prefix) =>
      `events {}
http {
  error_log ${prefix}/logs/error.log;
  access_log ${prefix}/logs/access.log;
  client_body_temp_path ${prefix}/client_body_temp;
  server {
    listen 127.0.0.1:0;
    location /api/ {
      proxy_pass ${up.origin};
      proxy_request_buffering off;
      client_max_body_size 0;
    }
    location /fcgi/ {
      fastcgi_pass 127.0.0.1:${fcgi.port};
      client_max_body_size 0;
    }
  }
}
`, { name: "tiny-chunks-" });
    await using gw = await spawnGateway(["--nginx-conf", p.conf]);
    // A first body warms the gateway (its compiler, the upstream's pool).
    const warm = letters(20_000);
    strictEqual(await post(gw.port, oneByteChunks(warm)), "HTTP/1.1 200 OK");
    strictEqual(bodies.length, 1);
    const body = letters(CHUNKS);
    const text = new TextDecoder().decode(body);
    const framed = oneByteChunks(body);
    // [path, the pieces the server got it in]
    const rows: [string, () => { body: string; pieces: number }][] = [
      ["/api/upload", () => ({ ...bodies[1]!, pieces: bodies[1]!.chunks })],
      ["/fcgi/upload.php", () => {
        const seen = fcgi.seen[0]!;
        return { body: seen.body, pieces: seen.stdinRecords };
      }],
    ];
    for (const [path, got] of rows) {
      await t.step(path, async () => {
        const before = await cost(gw.child.pid);
        strictEqual(await post(gw.port, framed, path), "HTTP/1.1 200 OK");
        const after = await cost(gw.child.pid);
        const { body, pieces } = got();
        strictEqual(body, text);
        const cpu = after.cpu - before.cpu;
        // A write per piece was 60,000 of them; gathered, one per write the
        // upstream took meanwhile.
        ok(pieces < CHUNKS / 10, `${pieces} pieces`);
        ok(cpu < MAX_STREAMED_CPU_S, `${cpu.toFixed(2)} s of CPU`);
      });
    }
  },
);
