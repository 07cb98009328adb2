/**
 * A client's side of a keep-alive connection in storm tests: one response
 * at a time, framed by its Content-Length.
 */

import { completeResponses } from "./_utils.ts";

const decoder = new TextDecoder();

/**
 * Reads one response (head and Content-Length body) off a keep-alive
 * connection; bytes past it stay in `state` for the next.
 *
 * @returns The status line's first 12 characters (`HTTP/1.1 401`), or
 * `null` when the connection ended first.
 */
export async function readResponse(
  conn: Deno.Conn,
  state: { buffer: Uint8Array },
): Promise<string | null> {
  const chunk = new Uint8Array(16 * 1024);
  for (let reads = 0; reads < 1000; reads++) {
    const text = decoder.decode(state.buffer);
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
      const total = end + 4 + length;
      if (state.buffer.length >= total) {
        state.buffer = state.buffer.slice(total);
        return text.slice(0, 12);
      }
    }
    const n = await conn.read(chunk);
    if (n === null) return null;
    const next = new Uint8Array(state.buffer.length + n);
    next.set(state.buffer);
    next.set(chunk.subarray(0, n), state.buffer.length);
    state.buffer = next;
  }
  return null;
}

/** A storm under way: what came back so far; disposing closes its connections. */
export interface Storm extends Disposable {
  /** How many responses each status line start (`HTTP/1.1 401`) had. */
  readonly statuses: Map<string, number>;
  /** Responses read so far. */
  readonly answered: number;
  /** Requests sent so far. */
  readonly sent: number;
  /** Settles when every request is answered (or a connection ended). */
  readonly done: Promise<void>;
}

/** Options of {@linkcode startStorm}. */
export interface StormOptions {
  /** Where to connect (`127.0.0.1`, `::1`). */
  hostname: string;
  port: number;
  /** Keep-alive connections, opened before the first request. */
  connections: number;
  /** Requests in all, shared by the connections. */
  requests: number;
  /** The raw request numbered `n` (0 up). */
  request: (n: number) => string;
  /**
   * Whether to send another after `sent` requests (at most `requests` in
   * all); every one when absent.
   */
  more?: (sent: number) => boolean;
}

/**
 * Sends `requests` requests over `connections` keep-alive connections, one
 * response read before each next request on a connection.
 *
 * @returns The storm, already under way.
 */
export async function startStorm(options: StormOptions): Promise<Storm> {
  const encoder = new TextEncoder();
  const conns: Deno.Conn[] = [];
  const statuses = new Map<string, number>();
  let answered = 0;
  let sent = 0;
  for (let i = 0; i < options.connections; i++) {
    conns.push(
      await Deno.connect({ hostname: options.hostname, port: options.port }),
    );
  }
  const done = Promise.all(conns.map(async (conn) => {
    const state = { buffer: new Uint8Array(0) };
    while (sent < options.requests && (options.more?.(sent) ?? true)) {
      await conn.write(encoder.encode(options.request(sent++)));
      const status = await readResponse(conn, state);
      if (status === null) return;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      answered++;
    }
  })).then(() => {});
  return {
    statuses,
    get answered() {
      return answered;
    },
    get sent() {
      return sent;
    },
    done,
    [Symbol.dispose]: () => {
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // closed by the storm's end
        }
      }
    },
  };
}

/**
 * One client's connection, kept alive between its requests (one at a
 * time): a new connection per request costs a storm about as much CPU as
 * the request itself. A response that closes (or the peer's close) opens a
 * new connection for the next request. Responses are framed as
 * {@linkcode completeResponses} frames them (no HEAD).
 *
 * @example Usage
 * ```ts ignore
 * using client = new KeptAlive(port);
 * const response = await client.ask("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
 * ```
 */
export class KeptAlive implements Disposable {
  #conn: Deno.Conn | null = null;
  #port: number;

  /** @param port The server's port on 127.0.0.1. */
  constructor(port: number) {
    this.#port = port;
  }

  /** Sends a GET and returns its response, "" when the peer never answers. */
  async ask(request: string): Promise<string> {
    // A kept connection the gateway closed as the request went out: once
    // more on a new one (a GET is safe to repeat).
    for (let attempt = 0; attempt < 2; attempt++) {
      this.#conn ??= await Deno.connect({
        hostname: "127.0.0.1",
        port: this.#port,
      });
      const answer = await this.#exchange(this.#conn, request);
      if (answer !== null) return answer;
    }
    return "";
  }

  async #exchange(conn: Deno.Conn, request: string): Promise<string | null> {
    // A bound for a gateway that stays silent, as rawRequest's.
    const timer = setTimeout(() => this.#drop(), 10_000);
    let bytes = new Uint8Array(0);
    try {
      await conn.write(new TextEncoder().encode(request));
      const buf = new Uint8Array(64 * 1024);
      // Bounded by the timer: it closes the connection.
      while (true) {
        const n = await conn.read(buf);
        if (n === null) {
          this.#drop();
          return bytes.length === 0 ? null : new TextDecoder().decode(bytes);
        }
        const more = new Uint8Array(bytes.length + n);
        more.set(bytes);
        more.set(buf.subarray(0, n), bytes.length);
        bytes = more;
        const read = completeResponses(bytes, [false]);
        if (read.count === 0) continue;
        if (read.closed || read.end !== bytes.length) this.#drop();
        return new TextDecoder().decode(bytes.subarray(0, read.end));
      }
    } catch {
      this.#drop();
      return bytes.length === 0 ? null : new TextDecoder().decode(bytes);
    } finally {
      clearTimeout(timer);
    }
  }

  #drop(): void {
    try {
      this.#conn?.close();
    } catch {
      // already closed
    }
    this.#conn = null;
  }

  /** Closes the connection. */
  [Symbol.dispose](): void {
    this.#drop();
  }
}
