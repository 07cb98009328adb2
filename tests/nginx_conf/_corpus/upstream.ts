/**
 * The corpus harness's upstream: a raw HTTP/1.x server on 127.0.0.1:0 that
 * records exactly what it receives (request line, every field in order, how
 * the body was framed) and answers by path: a redirect for a path ending in
 * `/redirect`, a WebSocket echo for an upgrade (`Upgrade: websocket` with
 * `Connection: upgrade`), JSON otherwise. Raw TCP,
 * because `Deno.serve` hides the request line's version and the framing.
 *
 * @module
 */

/** One request as the upstream received it. */
export interface Received {
  /** Which upstream (its placeholder's number, 1-based). */
  upstream: number;
  /** e.g. `POST /loginms HTTP/1.0`. */
  requestLine: string;
  /** Every field, in order, names as sent. */
  fields: [string, string][];
  /** `content-length N`, `chunked`, or `none`. */
  framing: string;
  /** The body, as text. */
  body: string;
}

/** A running recording upstream. */
export interface RecordingUpstream extends AsyncDisposable {
  port: number;
  /** What it received, in order (shared by every upstream of a run). */
  seen: Received[];
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** A buffered reader over a connection, bounded in what it keeps. */
class Reader {
  #buf = new Uint8Array(0);
  constructor(private conn: Deno.Conn) {}
  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(16 * 1024);
    const n = await this.conn.read(chunk).catch(() => null);
    if (n === null) return false;
    const next = new Uint8Array(this.#buf.length + n);
    next.set(this.#buf);
    next.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = next;
    // A peer that never ends its head cannot grow us past 1 MiB.
    return this.#buf.length < 1 << 20;
  }
  /** Reads up to and including `\r\n\r\n` (or `\r\n` with `line`). */
  async until(mark: string): Promise<string | null> {
    while (true) {
      const text = dec.decode(this.#buf);
      const at = text.indexOf(mark);
      if (at >= 0) {
        const head = text.slice(0, at + mark.length);
        this.#buf = this.#buf.subarray(enc.encode(head).length);
        return head;
      }
      if (!await this.#fill()) return null;
    }
  }
  async bytes(n: number): Promise<Uint8Array | null> {
    while (this.#buf.length < n) if (!await this.#fill()) return null;
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let n = 0;
  while (n < bytes.length) n += await conn.write(bytes.subarray(n));
}

async function readBody(
  r: Reader,
  fields: [string, string][],
): Promise<{ framing: string; body: string } | null> {
  const get = (name: string) =>
    fields.find(([k]) => k.toLowerCase() === name)?.[1];
  if (/chunked/i.test(get("transfer-encoding") ?? "")) {
    let body = "";
    for (let i = 0; i < 1000; i++) {
      const size = await r.until("\r\n");
      if (size === null) return null;
      const n = parseInt(size, 16);
      if (!(n >= 0)) return null;
      if (n === 0) {
        await r.until("\r\n");
        return { framing: "chunked", body };
      }
      const data = await r.bytes(n + 2);
      if (data === null) return null;
      body += dec.decode(data.subarray(0, n));
    }
    return null;
  }
  const length = get("content-length");
  if (length === undefined) return { framing: "none", body: "" };
  const n = Number(length);
  const data = await r.bytes(n);
  if (data === null) return null;
  return { framing: `content-length ${n}`, body: dec.decode(data) };
}

/** Echoes WebSocket frames (RFC 6455 §5.2) until a close or 10 frames. */
async function echoFrames(r: Reader, conn: Deno.Conn): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const head = await r.bytes(2);
    if (head === null) return;
    const opcode = head[0]! & 0x0f;
    let len = head[1]! & 0x7f;
    if (len === 126) {
      const ext = await r.bytes(2);
      if (ext === null) return;
      len = (ext[0]! << 8) | ext[1]!;
    } else if (len === 127) return;
    const mask = head[1]! & 0x80 ? await r.bytes(4) : null;
    const data = await r.bytes(len);
    if (data === null) return;
    if (mask) { for (let j = 0; j < len; j++) data[j]! ^= mask[j % 4]!; }
    const out = len < 126
      ? new Uint8Array([0x80 | opcode, len])
      : new Uint8Array([0x80 | opcode, 126, len >> 8, len & 0xff]);
    await writeAll(conn, new Uint8Array([...out, ...data]));
    if (opcode === 8) return;
  }
}

async function answer(
  conn: Deno.Conn,
  upstream: number,
  port: number,
  seen: Received[],
): Promise<void> {
  const r = new Reader(conn);
  for (let n = 0; n < 100; n++) {
    const head = await r.until("\r\n\r\n");
    if (head === null) return;
    const [requestLine = "", ...lines] = head.trimEnd().split("\r\n");
    const fields = lines.map((l): [string, string] => {
      const at = l.indexOf(":");
      return [l.slice(0, at), l.slice(at + 1).trim()];
    });
    const body = await readBody(r, fields);
    if (body === null) return;
    seen.push({ upstream, requestLine, fields, ...body });
    const get = (name: string) =>
      fields.find(([k]) => k.toLowerCase() === name)?.[1] ?? "";
    const target = requestLine.split(" ")[1] ?? "";
    // A back end switches only when `Connection` lists `upgrade` beside
    // `Upgrade` (RFC 9110 §7.8; Tomcat, Kestrel and Node's parser check
    // both); `Upgrade` with `Connection: keep-alive` gets the JSON answer.
    const upgrade = /websocket/i.test(get("upgrade")) &&
      get("connection").split(",").some((t) => /^\s*upgrade\s*$/i.test(t));
    if (upgrade) {
      const digest = new Uint8Array(
        await crypto.subtle.digest(
          "SHA-1",
          enc.encode(get("sec-websocket-key") + WS_GUID),
        ),
      );
      const accept = btoa(String.fromCharCode(...digest));
      await writeAll(
        conn,
        enc.encode(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" +
            `Connection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
        ),
      );
      await echoFrames(r, conn);
      return;
    }
    const close = requestLine.endsWith("HTTP/1.0") ||
      /close/i.test(get("connection"));
    const path = target.split("?")[0]!;
    const json = JSON.stringify({ upstream, target });
    const response = path.endsWith("/redirect")
      ? "HTTP/1.1 302 Found\r\n" +
        `Location: http://127.0.0.1:${port}${path}/next\r\n` +
        "Content-Length: 0\r\n"
      : "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
        "Set-Cookie: sid=1; Path=/\r\n" +
        `Content-Length: ${enc.encode(json).length}\r\n`;
    const bodyOut = path.endsWith("/redirect") || requestLine.startsWith("HEAD")
      ? ""
      : json;
    await writeAll(
      conn,
      enc.encode(
        `${response}${close ? "Connection: close\r\n" : ""}\r\n${bodyOut}`,
      ),
    );
    if (close) return;
  }
}

/**
 * Starts a recording upstream on 127.0.0.1:0.
 *
 * @param upstream Its number, recorded with each request.
 * @param seen Where requests are recorded (shared by a run's upstreams).
 * @returns The running upstream; disposing closes every connection.
 */
export function startRecordingUpstream(
  upstream: number,
  seen: Received[] = [],
): RecordingUpstream {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  const open = new Set<Deno.Conn>();
  const tasks = new Set<Promise<void>>();
  const accepting = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      const task = answer(conn, upstream, port, seen).catch(() => {})
        .finally(() => {
          open.delete(conn);
          try {
            conn.close();
          } catch { /* closed by the peer's end */ }
        });
      tasks.add(task);
      task.finally(() => tasks.delete(task));
    }
  })().catch(() => {});
  return {
    port,
    seen,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      await Promise.allSettled([...tasks]);
      await accepting;
    },
  };
}
