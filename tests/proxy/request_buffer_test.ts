/**
 * `proxy_request_buffering on` over real sockets: a body is read whole
 * (memory, then a temporary file) before any upstream is contacted, a slow
 * one meets `client_body_timeout`, and no temporary file outlives its
 * request.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  readHead,
  startGateway,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import {
  fitsInMemory,
  PREREAD,
  readRequestBody,
} from "../../src/proxy/request_buffer.ts";
import { TempFiles } from "../../src/proxy/mod.ts";

const HOST = "Host: localhost\r\n";

/** Reads a request's head and its Content-Length body from a raw connection. */
async function readRequest(
  conn: Deno.Conn,
): Promise<{ head: string; body: Uint8Array } | null> {
  const buf = new Uint8Array(64 * 1024);
  let bytes = new Uint8Array(0);
  const append = (chunk: Uint8Array) => {
    const next = new Uint8Array(bytes.length + chunk.length);
    next.set(bytes);
    next.set(chunk, bytes.length);
    bytes = next;
  };
  let end = -1;
  while (end < 0) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return null;
    append(buf.subarray(0, n));
    end = new TextDecoder().decode(bytes).indexOf("\r\n\r\n");
  }
  const head = new TextDecoder().decode(bytes.subarray(0, end));
  const length = Number(head.match(/\r\ncontent-length: (\d+)/i)?.[1] ?? 0);
  while (bytes.length < end + 4 + length) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return null;
    append(buf.subarray(0, n));
  }
  return { head, body: bytes.subarray(end + 4, end + 4 + length) };
}

/**
 * Sends a request and reads the answer until its page has arrived (Deno.serve
 * keeps a connection whose body is unread; the README names it).
 */
async function answer(port: number, text: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), 5000);
  let out = "";
  try {
    await writeText(conn, text);
    const buf = new Uint8Array(16 * 1024);
    while (!out.includes("</html>")) {
      const n = await conn.read(buf);
      if (n === null) break;
      out += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
  } catch {
    // closed by the timer
  } finally {
    clearTimeout(timer);
  }
  return out;
}

/** Files in a folder, sorted. */
function listing(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("request buffering: a stalled body meets client_body_timeout (408) and never reaches an upstream", async () => {
  await using up = startRawUpstream(async (conn) => {
    await readHead(conn);
  });
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    clientBodyTimeoutMs: 300,
  });
  // Five clients each send half a body, small and large, then nothing.
  const sizes = [10, 5000, 20_000, 200_000, 1_000_000];
  const answers = await Promise.all(sizes.map((size) =>
    answer(
      gw.port,
      `POST /api/upload HTTP/1.1\r\n${HOST}Content-Length: ${size}\r\n\r\n${
        "x".repeat(size / 2)
      }`,
    )
  ));
  deepStrictEqual(
    answers.map((a) => a.slice(0, 12)),
    sizes.map(() => "HTTP/1.1 408"),
  );
  for (const a of answers) match(a, /\r\nconnection: close\r\n/i);
  strictEqual(up.connections, 0, "no upstream connection was held");
  await waitFor(() => gw.accessLines.length === sizes.length);
  for (const line of gw.accessLines) {
    match(line, /"POST \/api\/upload HTTP\/1.1" 408 /);
  }
  // nginx 1.22 writes no error line for it (ngx_http_read_client_request_body_handler).
  deepStrictEqual(
    gw.errorLines.filter((l) => !l.includes("temporary file")),
    [],
  );
});

Deno.test("request buffering: a large chunked body goes to a temporary file, is sent with Content-Length, and leaves no file", async () => {
  const dir = await Deno.makeTempDir();
  await using _dir = {
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
  // A file a killed run left, and one that is not the gateway's.
  await Deno.writeTextFile(`${dir}/0000000007`, "left over");
  await Deno.writeTextFile(`${dir}/keep.txt`, "not ours");
  const seen: { head: string; body: Uint8Array; files: string[] }[] = [];
  await using up = startRawUpstream(async (conn) => {
    const request = await readRequest(conn);
    if (request === null) return;
    // While the upstream has the body, the folder holds no file of it.
    seen.push({ ...request, files: listing(dir) });
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
  });
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    clientBodyTempPath: dir,
  });
  const body = new Uint8Array(300_000).map((_, i) => i % 251);
  const res = await fetch(`${gw.url}/api/upload`, {
    method: "POST",
    // A stream: fetch sends it chunked.
    body: new Blob([body]).stream(),
  });
  strictEqual(await res.text(), "ok");
  strictEqual(seen.length, 1);
  match(seen[0]!.head, /\r\nContent-Length: 300000\r\n/);
  ok(!/transfer-encoding/i.test(seen[0]!.head));
  deepStrictEqual(seen[0]!.body, body);
  // Removed when opened: gone from the folder while still in use (Windows
  // may list a file removed while open until its handle closes).
  if (Deno.build.os !== "windows") {
    deepStrictEqual(seen[0]!.files, ["keep.txt"]);
  }
  deepStrictEqual(listing(dir), ["keep.txt"]);
  const warn = gw.errorLines.find((l) => l.includes("temporary file")) ?? "";
  match(
    warn,
    /\[warn\] .*a client request body is buffered to a temporary file /,
  );
  match(warn.slice(warn.indexOf(dir) + dir.length), /^\/\d{10}, client: /);
});

Deno.test("request buffering: a body up to client_body_buffer_size stays in memory", async () => {
  const dir = await Deno.makeTempDir();
  await using _dir = {
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
  await using up = startRawUpstream(async (conn) => {
    const request = await readRequest(conn);
    if (request === null) return;
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\nContent-Length: ${
        String(request.body.length).length
      }\r\nConnection: close\r\n\r\n${request.body.length}`,
    );
  });
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    clientBodyTempPath: dir,
    clientBodyBufferSize: 8192,
  });
  // Under 1.25 times the buffer with a length, past the most nginx reads
  // with the head (1 KiB): memory, as nginx sizes it.
  for (const size of [1, 8192, 10_239, 11_263]) {
    const res = await fetch(`${gw.url}/api/x`, {
      method: "POST",
      body: "y".repeat(size),
    });
    strictEqual(await res.text(), String(size));
  }
  strictEqual(
    gw.errorLines.filter((l) => l.includes("temporary file")).length,
    0,
  );
  const res = await fetch(`${gw.url}/api/x`, {
    method: "POST",
    body: "y".repeat(11_264),
  });
  strictEqual(await res.text(), "11264");
  strictEqual(
    gw.errorLines.filter((l) => l.includes("temporary file")).length,
    1,
  );
});

Deno.test("request buffering: a temporary folder that cannot be made is nginx's 500 and [crit] line", async () => {
  const file = await Deno.makeTempFile();
  await using _file = { [Symbol.asyncDispose]: () => Deno.remove(file) };
  await using up = startRawUpstream(async (conn) => {
    await readHead(conn);
  });
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    clientBodyTempPath: `${file}/body`,
  });
  const res = await fetch(`${gw.url}/api/x`, {
    method: "POST",
    body: "z".repeat(100_000),
  });
  strictEqual(res.status, 500);
  await res.body?.cancel();
  strictEqual(up.connections, 0);
  const line = gw.errorLines.find((l) => l.includes("[crit]")) ?? "";
  // The OS's code and text: ENOTDIR on Linux, a Win32 code on Windows.
  const code = Deno.build.os === "windows"
    ? "\\d+: [^)]+"
    : "20: Not a directory";
  ok(line.includes(`open() "${file}/body" failed (`), line);
  match(line, new RegExp(`failed \\(${code}\\), client: `));
});

Deno.test("request buffering off: proxy_request_buffering off streams the body as it arrives", async () => {
  await using up = startRawUpstream(async (conn, _i, self) => {
    const head = await readHead(conn);
    if (head) self.heads.push(head);
    await readRequest(conn).catch(() => null);
  });
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    proxyRequestBuffering: false,
  });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
  try {
    await writeText(
      conn,
      `POST /api/x HTTP/1.1\r\n${HOST}Content-Length: 100000\r\n\r\n${
        "a".repeat(50_000)
      }`,
    );
    // The upstream has the head while half the body is still to come.
    await waitFor(() => up.heads.length === 1);
    match(up.heads[0]!, /\r\nContent-Length: 100000\r\n/);
  } finally {
    conn.close();
  }
});

Deno.test("readRequestBody() keeps a body in memory up to nginx's buffer past what it reads with the head, and files the rest", async () => {
  const dir = await Deno.makeTempDir();
  await using _dir = {
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
  const temp = new TempFiles(dir);
  // [client_body_buffer_size, declared length or null (chunked), size, to a file]
  const rows: [number, number | null, number, boolean][] = [];
  for (const buffer of [1024, 8192, 16_384]) {
    const lengthEdge = buffer + (buffer >> 2) + PREREAD;
    rows.push([buffer, lengthEdge - 1, lengthEdge - 1, false]);
    rows.push([buffer, lengthEdge, lengthEdge, true]);
    rows.push([buffer, null, buffer + PREREAD, false]);
    rows.push([buffer, null, buffer + PREREAD + 1, true]);
    strictEqual(fitsInMemory(lengthEdge - 1, buffer), true);
    strictEqual(fitsInMemory(lengthEdge, buffer), false);
  }
  for (const [bufferSize, length, size, filed] of rows) {
    const files: string[] = [];
    // Pieces of 1000 bytes, as a socket hands a body over.
    const body = new Uint8Array(size).fill(121);
    const pieces = Array.from(
      { length: Math.ceil(size / 1000) },
      (_, i) => body.subarray(i * 1000, (i + 1) * 1000),
    );
    const read = await readRequestBody(ReadableStream.from(pieces), {
      length,
      limit: 0,
      bufferSize,
      timeoutMs: 60_000,
      temp,
      onTempFile: (path) => files.push(path),
    });
    strictEqual(read.kind, "ready");
    if (read.kind === "ready") {
      read.temp?.close();
      deepStrictEqual(
        [read.body?.kind, files.length],
        filed ? ["file", 1] : ["bytes", 0],
        `${bufferSize} ${length ?? "chunked"} ${size}`,
      );
    }
  }
});

/** A temporary folder whose files count their writes. */
class CountedTempFiles extends TempFiles {
  writes = 0;
  override async create() {
    const temp = await super.create();
    const file = temp.file;
    const write = file.write.bind(file);
    file.write = (bytes: Uint8Array) => {
      this.writes++;
      return write(bytes);
    };
    return temp;
  }
}

/** `body` cut into pieces of `sizes` (repeated), as a plain or a byte stream. */
function piecesOf(
  body: Uint8Array,
  sizes: number[],
  kind: "plain" | "bytes",
): ReadableStream<Uint8Array> {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < body.length;) {
    const n = Math.min(sizes[pieces.length % sizes.length]!, body.length - at);
    pieces.push(body.slice(at, at + n));
    at += n;
  }
  if (kind === "plain") return ReadableStream.from(pieces);
  // A byte stream, as Deno.serve's: read with a BYOB reader.
  let next = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const piece = pieces[next++];
      if (piece !== undefined) {
        controller.enqueue(piece);
        return;
      }
      controller.close();
      // A BYOB read waiting at the end settles only when told.
      controller.byobRequest?.respond(0);
    },
  });
}

Deno.test("readRequestBody() gathers small pieces into blocks: the body whole, its file written per 64 KiB, not per piece", async (t) => {
  const dir = await Deno.makeTempDir();
  await using _dir = {
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
  // [pieces' sizes (repeated up to the body's size), body size, file writes at most]
  const rows: [number[], number, number][] = [
    [[1], 30_000, 2],
    [[1], 100_000, 3],
    [[3, 1000, 7], 150_000, 4],
    // Pieces larger than a read, between small ones.
    [[1, 100_000, 2, 70_000], 400_000, 12],
    [[65_536], 300_000, 6],
    // A plain stream's larger pieces are kept as they came, after the small.
    [[10, 5000, 20], 100_000, 40],
  ];
  for (const kind of ["plain", "bytes"] as const) {
    for (const [sizes, size, most] of rows) {
      const body = new Uint8Array(size).map((_, i) => i % 251);
      await t.step(
        `${kind}: pieces of ${sizes} to ${size} bytes, to a file`,
        async () => {
          const temp = new CountedTempFiles(dir);
          const read = await readRequestBody(piecesOf(body, sizes, kind), {
            length: null,
            limit: 0,
            bufferSize: 8192,
            timeoutMs: 60_000,
            temp,
          });
          if (read.kind !== "ready" || read.body?.kind !== "file") {
            throw new Error(`not filed: ${read.kind}`);
          }
          try {
            strictEqual(read.body.length, size);
            const back = new Uint8Array(size);
            for (let at = 0; at < size;) {
              const n = await read.body.file.readAt(back.subarray(at), at);
              if (n === null) break;
              at += n;
            }
            deepStrictEqual(back, body);
          } finally {
            read.temp?.close();
          }
          ok(temp.writes <= most, `${temp.writes} writes`);
        },
      );
      // A chunked body read ahead up to client_max_body_size.
      await t.step(
        `${kind}: pieces of ${sizes} to ${size} bytes, in memory`,
        async () => {
          const read = await readRequestBody(piecesOf(body, sizes, kind), {
            length: null,
            limit: size,
            bufferSize: size,
            timeoutMs: 60_000,
          });
          if (read.kind !== "ready" || read.body?.kind !== "bytes") {
            throw new Error(`not in memory: ${read.kind}`);
          }
          deepStrictEqual(read.body.bytes, body);
        },
      );
    }
  }
});
