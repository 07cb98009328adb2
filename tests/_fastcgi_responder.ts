/**
 * A small FastCGI 1.0 responder for the tests, on 127.0.0.1:0: it reads
 * `BEGIN_REQUEST`, the `PARAMS` and the `STDIN` records, records what it
 * received (each parameter in order, the body), and answers by the last
 * segment of `DOCUMENT_URI` (or `SCRIPT_NAME`): the default echoes the
 * parameters and body as JSON; the others are the hostile and odd answers
 * the FastCGI tests need (see {@linkcode MODES}). Written apart from the
 * gateway's own codec, so the two check each other.
 *
 * @module
 */

/** One request as the responder received it. */
export interface FastcgiSeen {
  /** The `BEGIN_REQUEST` role and flags. */
  role: number;
  flags: number;
  /** Every parameter, in order, as text (bytes read as latin1). */
  params: [string, string][];
  /** The body, as latin1 text. */
  body: string;
  /** The `STDIN` records that held it (the empty last one not counted). */
  stdinRecords: number;
}

/** A running responder. */
export interface FastcgiResponder extends AsyncDisposable {
  port: number;
  /** What it received, in order. */
  seen: FastcgiSeen[];
  /** How many connections have ended (the gateway's side closed, or ours). */
  readonly ended: number;
}

const latin1 = new TextDecoder("latin1");
const enc = new TextEncoder();

function record(type: number, content: Uint8Array, padding = -1): Uint8Array {
  const pad = padding >= 0 ? padding : (8 - (content.length % 8)) % 8;
  const out = new Uint8Array(8 + content.length + pad);
  out.set([1, type, 0, 1, content.length >> 8, content.length & 0xff, pad, 0]);
  out.set(content, 8);
  return out;
}

/** `STDOUT` records of at most 65535 bytes each. */
function stdout(text: string | Uint8Array): Uint8Array[] {
  const bytes = typeof text === "string" ? enc.encode(text) : text;
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += 65535) {
    out.push(record(6, bytes.subarray(at, at + 65535)));
  }
  return out;
}

const STDOUT_END = record(6, new Uint8Array(0));
/** Marks the records after which the responder waits for the close. */
const STALL = new Uint8Array(0);
const END = record(3, new Uint8Array(8));

function echo(seen: FastcgiSeen): Uint8Array[] {
  const json = JSON.stringify({ params: seen.params, body: seen.body });
  return [
    ...stdout(`Content-Type: application/json\r\nX-Echo: 1\r\n\r\n${json}`),
    STDOUT_END,
    END,
  ];
}

/** The answers by mode: the records to send (`null`: send nothing, wait). */
export const MODES: Record<string, (seen: FastcgiSeen) => Uint8Array[] | null> =
  {
    "stderr.php": (seen) => [
      record(7, enc.encode("PHP Warning:  boom in /x/stderr.php on line 2\n")),
      ...echo(seen),
    ],
    "status.php": () => [
      ...stdout(
        "Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nmissing",
      ),
      STDOUT_END,
      END,
    ],
    "location.php": () => [
      ...stdout("Location: /elsewhere?x=1\r\nX-Hidden: 1\r\n\r\n"),
      STDOUT_END,
      END,
    ],
    "accel.php": () => [
      ...stdout(
        "Status: 200\r\nX-Accel-Buffering: no\r\nX-Powered-By: PHP/8\r\nContent-Length: 2\r\n\r\nokEXTRA",
      ),
      STDOUT_END,
      END,
    ],
    "big-head.php": () => [
      ...stdout(`X-Big: ${"a".repeat(5000)}\r\n\r\nbody`),
      STDOUT_END,
      END,
    ],
    "never-ends.php": () =>
      Array.from(
        { length: 64 },
        () => stdout(`X-A: ${"a".repeat(1000)}\r\n`)[0]!,
      ),
    "bad-type.php": () => [record(11, enc.encode("junk"))],
    "bad-version.php": () => [new Uint8Array([2, 6, 0, 1, 0, 0, 0, 0])],
    "invalid-status.php":
      () => [...stdout("Status: abc\r\n\r\n"), STDOUT_END, END],
    "invalid-line.php": () => [...stdout("X A: 1\r\n\r\n"), STDOUT_END, END],
    "no-head.php": () => [STDOUT_END, END],
    "end-first.php": () => [END],
    "x-accel.php": () => [
      ...stdout(
        "X-Accel-Redirect: /caught\r\nContent-Type: text/x-app\r\nSet-Cookie: a=1\r\nX-Other: 1\r\n\r\nnot sent",
      ),
      STDOUT_END,
      END,
    ],
    // An X-Accel-Redirect to a location with limits or `deny all`, for an
    // SSI include whose request follows it.
    "accel-limited.php": () => [
      ...stdout("X-Accel-Redirect: /limited/page.html\r\n\r\n"),
      STDOUT_END,
      END,
    ],
    "accel-denied.php": () => [
      ...stdout("X-Accel-Redirect: /denied/page.html\r\n\r\n"),
      STDOUT_END,
      END,
    ],
    // X-Accel-Redirect values nginx refuses (ngx_http_parse_unsafe_uri).
    "accel-dotdot.php": () => [
      ...stdout("X-Accel-Redirect: /files/../../etc/passwd\r\n\r\n"),
      STDOUT_END,
      END,
    ],
    "accel-nul.php": () => [
      ...stdout("X-Accel-Redirect: /files/a%00.php\r\n\r\n"),
      STDOUT_END,
      END,
    ],
    "accel-empty.php": () => [
      ...stdout("X-Accel-Redirect: \r\n\r\n"),
      STDOUT_END,
      END,
    ],
    "two-types.php": () => [
      ...stdout(
        "Content-Type: text/html\r\nContent-Type: text/plain\r\n\r\nbody",
      ),
      STDOUT_END,
      END,
    ],
    "no-end.php": () => stdout("Content-Type: text/plain\r\n\r\npartial"),
    "closed.php": () => [],
    "short.php": () => [
      ...stdout("Content-Length: 10\r\n\r\nabc"),
      STDOUT_END,
      END,
    ],
    "two-lengths.php": () => [
      ...stdout("Content-Length: 2\r\nContent-Length: 4\r\n\r\nbody"),
      STDOUT_END,
      END,
    ],
    "padding.php": (seen) => [
      ...Array.from({ length: 2000 }, () => record(7, new Uint8Array(0), 255)),
      ...echo(seen),
    ],
    "stderr-flood.php": (seen) => [
      // 100 KiB of warnings before the head: more than the head buffer.
      ...Array.from(
        { length: 100 },
        (_, i) =>
          record(7, enc.encode(`PHP Notice:  n${i} ${"x".repeat(1000)}`)),
      ),
      ...echo(seen),
    ],
    "huge-record.php": () => [
      ...stdout(`Content-Type: text/plain\r\n\r\n${"z".repeat(65000)}`),
      STDOUT_END,
      END,
    ],
    "split-line.php": () => [
      record(6, enc.encode("Content-Ty")),
      record(6, enc.encode("pe: text/x-split\r\nX-B: 2\r")),
      record(6, enc.encode("\n\r\nsplit")),
      STDOUT_END,
      END,
    ],
    "silent.php": () => null,
    // The head and part of the body, then nothing (STALL: wait for the close).
    "stall-body.php": () => [
      ...stdout("Content-Type: text/plain\r\n\r\npart"),
      STALL,
    ],
  };

async function readExactly(
  conn: Deno.Conn,
  n: number,
  state: { buf: Uint8Array },
): Promise<Uint8Array | null> {
  for (let i = 0; state.buf.length < n && i < 100_000; i++) {
    const chunk = new Uint8Array(64 * 1024);
    const got = await conn.read(chunk).catch(() => null);
    if (got === null) return null;
    const next = new Uint8Array(state.buf.length + got);
    next.set(state.buf);
    next.set(chunk.subarray(0, got), state.buf.length);
    state.buf = next;
  }
  if (state.buf.length < n) return null;
  const out = state.buf.slice(0, n);
  state.buf = state.buf.subarray(n);
  return out;
}

function pairs(bytes: Uint8Array): [string, string][] {
  const out: [string, string][] = [];
  let at = 0;
  const len = () => {
    const b = bytes[at]!;
    if (b < 128) return at++, b;
    const n = ((b & 0x7f) << 24) | (bytes[at + 1]! << 16) |
      (bytes[at + 2]! << 8) | bytes[at + 3]!;
    at += 4;
    return n;
  };
  while (at < bytes.length) {
    const n = len();
    const v = len();
    const name = latin1.decode(bytes.subarray(at, at + n));
    at += n;
    out.push([name, latin1.decode(bytes.subarray(at, at + v))]);
    at += v;
  }
  return out;
}

/** Reads one request's records; `null` when the connection ends first. */
async function readRequest(conn: Deno.Conn): Promise<FastcgiSeen | null> {
  const state = { buf: new Uint8Array(0) };
  const seen: FastcgiSeen = {
    role: 0,
    flags: 0,
    params: [],
    body: "",
    stdinRecords: 0,
  };
  let params = new Uint8Array(0);
  for (let i = 0; i < 10_000; i++) {
    const head = await readExactly(conn, 8, state);
    if (head === null) return null;
    const length = (head[4]! << 8) | head[5]!;
    const content = await readExactly(conn, length + head[6]!, state);
    if (content === null) return null;
    const data = content.subarray(0, length);
    if (head[1] === 1) {
      seen.role = (data[0]! << 8) | data[1]!;
      seen.flags = data[2]!;
    } else if (head[1] === 4) {
      if (length === 0) seen.params = pairs(params);
      else {
        const next = new Uint8Array(params.length + length);
        next.set(params);
        next.set(data, params.length);
        params = next;
      }
    } else if (head[1] === 5) {
      if (length === 0) return seen;
      seen.body += latin1.decode(data);
      seen.stdinRecords++;
    }
  }
  return null;
}

/** Options of {@linkcode startFastcgiResponder}. */
export interface ResponderOptions {
  /** Told about each request as it is received. */
  onSeen?: (seen: FastcgiSeen) => void;
  /** Answer every request with this plain text instead of by mode. */
  plain?: string;
  /**
   * Holds a request's answer until the promise it returns settles (a
   * request kept open, for `least_conn`'s counts); none when `undefined`.
   */
  hold?: (seen: FastcgiSeen) => Promise<void> | undefined;
}

async function serve(
  conn: Deno.Conn,
  seenList: FastcgiSeen[],
  options: ResponderOptions,
): Promise<void> {
  try {
    const seen = await readRequest(conn);
    if (seen === null) return;
    seenList.push(seen);
    options.onSeen?.(seen);
    await options.hold?.(seen);
    const param = (name: string) =>
      seen.params.find(([n]) => n === name)?.[1] ?? "";
    const uri = param("DOCUMENT_URI") || param("SCRIPT_NAME");
    const mode = MODES[uri.slice(uri.lastIndexOf("/") + 1)];
    const records = options.plain !== undefined
      ? [
        ...stdout(`Content-Type: text/plain\r\n\r\n${options.plain}`),
        STDOUT_END,
        END,
      ]
      : mode === undefined
      ? echo(seen)
      : mode(seen);
    if (records === null) {
      // Silent: wait until the gateway gives up and closes.
      await conn.read(new Uint8Array(1)).catch(() => null);
      return;
    }
    // One write: the reader's reads then split the records as they fall in
    // its buffer, the same way on both sides.
    const stall = records.includes(STALL);
    let size = 0;
    for (const r of records) size += r.length;
    const all = new Uint8Array(size);
    let at = 0;
    for (const r of records) all.set(r, at), at += r.length;
    for (let done = 0; done < all.length;) {
      const n = await conn.write(all.subarray(done)).catch(() => null);
      if (n === null) break;
      done += n;
    }
    if (stall) await conn.read(new Uint8Array(1)).catch(() => null);
  } finally {
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  }
}

/**
 * Starts a responder on 127.0.0.1 at a free port.
 *
 * @param options A hook for each request; one plain answer for all.
 * @returns Its port, what it received, and its disposal (waits for its
 * connections to end).
 */
export function startFastcgiResponder(
  options: ResponderOptions = {},
): FastcgiResponder {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: FastcgiSeen[] = [];
  const open = new Set<Promise<void>>();
  let ended = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      const done = serve(conn, seen, options).finally(() => {
        ended++;
        open.delete(done);
      });
      open.add(done);
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    seen,
    get ended() {
      return ended;
    },
    async [Symbol.asyncDispose]() {
      listener.close();
      await accepting;
      await Promise.all(open);
    },
  };
}
