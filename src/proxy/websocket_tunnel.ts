/**
 * An open WebSocket tunnel: the browser's socket on one side, RFC 6455
 * frames over the upstream's connection on the other. Messages, ping/pong
 * and close codes cross in both directions; either side closing ends both.
 * A tunnel idle for `proxy_read_timeout` is closed with nginx's `upstream
 * timed out … while proxying upgraded connection` line, and so is one whose
 * client's side has not opened by then (its client left as the 101 was
 * written), with `client timed out`: the upstream's pings keep a tunnel
 * from going idle, so every tunnel ends when its client is gone.
 *
 * Memory per tunnel is bounded both ways, counting per message what the
 * runtime or an array costs beyond the bytes (`MESSAGE_COST`,
 * websocket_client_queue.ts), so that a flood of empty messages counts as
 * bytes would. Towards the client, reading the upstream pauses while what
 * was sent and not yet written costs more than {@linkcode CLIENT_HIGH_WATER},
 * so TCP pushes back on the upstream as nginx's full buffer does. Towards
 * the upstream nothing can push back: Deno's server-side WebSocket delivers
 * every message and cannot be paused, so past `UPSTREAM_QUEUE_LIMIT` queued
 * (websocket_upstream_queue.ts) the tunnel is closed (1008) and logged,
 * where nginx would keep its fixed buffer full and simply stop reading the
 * client.
 *
 * @module
 */

import type { GatewayConfig } from "../config/mod.ts";
import { ClientQueue } from "./websocket_client_queue.ts";
import { UpstreamQueue } from "./websocket_upstream_queue.ts";
import type { UpstreamReply } from "../upstream/mod.ts";
import { UpstreamError, upstreamTimeout } from "../upstream/mod.ts";
import {
  closePayload,
  type Frame,
  FrameError,
  FrameParser,
  MAX_MESSAGE_BYTES,
  type Message,
  MessageAssembler,
  OPCODE,
  parseClosePayload,
  sendableCloseCode,
} from "./websocket_frames.ts";

/** What a tunnel reads and reports; idle `timeouts.readMs`, it is closed. */
export interface TunnelOptions extends Pick<GatewayConfig, "timeouts"> {
  /** Told when a tunnel ends, with the frame bytes sent to the client. */
  onClosed: (bytesToClient: number) => void;
  /** Told about a tunnel failure, with the `upstream:` field. */
  onLateFailure: (error: UpstreamError, upstream: string) => void;
}

/**
 * Reading the upstream pauses while what the client's socket holds costs
 * more than this (bytes, and `MESSAGE_COST` per message), and resumes below
 * {@linkcode CLIENT_LOW_WATER}: enough in flight for a fast client's
 * throughput, a quarter of it to avoid flapping.
 */
export const CLIENT_HIGH_WATER = 1024 * 1024;
/** See {@linkcode CLIENT_HIGH_WATER}. */
export const CLIENT_LOW_WATER = 256 * 1024;
/** Nothing read: the parser goes on with the bytes it holds. */
const NO_BYTES = new Uint8Array(0);
/** Deno's WebSocket has no drain event: `bufferedAmount` is polled. */
const DRAIN_POLL_MS = 10;

/** Peaks across all tunnels, read by tests to bound memory without RSS. */
export const tunnelCounters = {
  /**
   * The highest cost (bytes and `MESSAGE_COST` per message) seen buffered
   * towards one client past the high-water mark, held or in its socket.
   */
  peakBufferedToClient: 0,
  /** Bytes the upstream frame parsers copied, in all. */
  parserBytesCopied: 0,
};

/**
 * Joins the client's WebSocket to the upstream's upgraded connection.
 *
 * @param client The browser's side.
 * @param reply The upstream's 101 reply, with its connection.
 * @param field The `upstream:` field for the tunnel's error lines.
 * @param options The idle timeout and what to report.
 */
export function bridge(
  client: WebSocket,
  reply: UpstreamReply,
  field: string,
  options: TunnelOptions,
): void {
  const tunnel = new Tunnel(client, reply.upgraded!.conn, field, options);
  tunnel.listen();
  tunnel.pump(reply.upgraded!.rest);
}

/**
 * One open tunnel: client messages become masked frames upstream, upstream
 * frames become client messages, and the first side to close or fail ends
 * both, reporting the frame bytes sent to the client.
 */
class Tunnel {
  #client: WebSocket;
  #conn: Deno.Conn;
  #field: string;
  #options: TunnelOptions;
  #parser = new FrameParser();
  #messages = new MessageAssembler();
  /** Frames for the upstream, written in order by one writer. */
  #toUpstream: UpstreamQueue;
  #ended = false;
  #bytesToClient = 0;
  /** Messages towards the client, held or queued in the runtime. */
  #toBrowser: ClientQueue;
  /** Reading frames stopped for the client's backlog; more are buffered. */
  #stalled = false;
  #clientOpen = false;
  /** Waiting for the client to drain: the upstream is not being read. */
  #paused = false;
  #idle: ReturnType<typeof setTimeout> | undefined;
  /** Ends a tunnel whose client's side never opens (see `listen`). */
  #opening: ReturnType<typeof setTimeout> | undefined;

  constructor(
    client: WebSocket,
    conn: Deno.Conn,
    field: string,
    options: TunnelOptions,
  ) {
    this.#client = client;
    this.#conn = conn;
    this.#field = field;
    this.#options = options;
    this.#toBrowser = new ClientQueue(client);
    this.#toUpstream = new UpstreamQueue(conn, () => this.#finish());
    client.binaryType = "arraybuffer";
  }

  /** Relays the client's side: open, messages, close. */
  listen(): void {
    const client = this.#client;
    // A client gone before its 101 was written gets no `close` from Deno's
    // server socket: a failed upgrade fires `error` alone, one that never
    // settles nothing at all, while an upstream that pings keeps the idle
    // timer from ending the tunnel. So the client's side has
    // `proxy_read_timeout` to open, as nginx times the 101's write with
    // `send_timeout` (`ngx_http_upstream_upgrade`), and a failure before
    // it opened ends the tunnel.
    this.#opening = setTimeout(
      () => this.#fail(clientTimedOut(), 1001),
      this.#options.timeouts.readMs,
    );
    client.onerror = () => {
      if (!this.#clientOpen) this.#finish();
    };
    client.onopen = () => {
      clearTimeout(this.#opening);
      this.#clientOpen = true;
      this.#toBrowser.open();
    };
    client.onmessage = (event) => {
      this.#armIdle();
      const text = typeof event.data === "string";
      const payload = text
        ? new TextEncoder().encode(event.data)
        : new Uint8Array(event.data as ArrayBuffer);
      // The upstream's bound, from the browser's side too: Deno's server
      // socket refuses a frame over 64 MiB but joins fragments without
      // limit, so a larger message is refused here before it is forwarded.
      if (payload.length > MAX_MESSAGE_BYTES) {
        this.#sendUpstream(OPCODE.close, closePayload(1009));
        this.#fail(
          new UpstreamError(
            `client sent too big message: ${payload.length} bytes`,
            { kind: "unknown", action: "proxying upgraded connection" },
          ),
          1009,
        );
        return;
      }
      this.#sendUpstream(text ? OPCODE.text : OPCODE.binary, payload);
    };
    client.onclose = (event) => {
      if (this.#ended) return;
      // Deno answered the client's close frame with its payload (RFC 6455
      // §5.5.1).
      const code = sendableCloseCode(event.code);
      const payload = closePayload(
        code,
        code === event.code ? event.reason : "",
      );
      this.#bytesToClient += frameSize(payload.length);
      this.#sendUpstream(OPCODE.close, payload);
      this.#finish();
    };
  }

  /**
   * Reads the upstream's side until it closes, starting with the bytes that
   * came after the handshake, pausing while the client is behind.
   *
   * @param rest Bytes read past the 101 response's head.
   */
  async pump(rest: Uint8Array): Promise<void> {
    this.#armIdle();
    try {
      const buf = new Uint8Array(64 * 1024);
      let bytes: Uint8Array | null = rest;
      while (!this.#ended) {
        if (bytes !== null) {
          this.#stalled = false;
          this.#onFrames(bytes);
          bytes = null;
        } else if (this.#behind()) {
          await this.#waitForClient();
        } else if (this.#stalled) {
          bytes = NO_BYTES; // the frames the parser still holds
        } else {
          const n = await this.#conn.read(buf);
          if (n === null) break;
          this.#armIdle();
          bytes = buf.subarray(0, n);
        }
      }
      this.#finish();
    } catch (error) {
      if (error instanceof FrameError && !this.#ended) {
        this.#sendUpstream(OPCODE.close, closePayload(error.code));
        this.#fail(
          new UpstreamError(`upstream sent ${error.message}`, {
            kind: "invalid-response",
            action: "proxying upgraded connection",
          }),
          error.code,
        );
      } else {
        this.#finish();
      }
    }
  }

  /**
   * What the messages sent to the client and not yet on its wire hold:
   * their bytes and a cost per message (websocket_client_queue.ts).
   */
  #clientBacklog(): number {
    return this.#toBrowser.cost();
  }

  /** Whether the client's backlog is past the high-water mark. */
  #behind(): boolean {
    const queue = this.#toBrowser;
    if (queue.costBound() <= CLIENT_HIGH_WATER) return false;
    const cost = queue.cost();
    tunnelCounters.peakBufferedToClient = Math.max(
      tunnelCounters.peakBufferedToClient,
      cost,
    );
    return cost > CLIENT_HIGH_WATER;
  }

  /**
   * Stops reading the upstream until the client's backlog falls below the
   * low-water mark. `proxy_read_timeout` does not run meanwhile: nginx arms
   * it only while it waits to read the upstream, and times the stalled
   * client with `send_timeout` instead (`ngx_http_upstream_process_upgraded`),
   * here the same length, reset whenever the client takes some bytes.
   */
  async #waitForClient(): Promise<void> {
    this.#paused = true;
    clearTimeout(this.#idle);
    let last = this.#clientBacklog();
    let since = Date.now();
    while (!this.#ended && this.#clientBacklog() > CLIENT_LOW_WATER) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
      const now = this.#clientBacklog();
      if (now < last) since = Date.now();
      last = now;
      if (Date.now() - since > this.#options.timeouts.readMs) {
        this.#fail(clientTimedOut(), 1001);
      }
    }
    this.#paused = false;
    if (!this.#ended) this.#armIdle();
  }

  /** Logs a failure with the request's context, then ends both sides. */
  #fail(error: UpstreamError, code: number): void {
    if (this.#ended) return;
    this.#options.onLateFailure(error, this.#field);
    this.#finish(code, error.message.slice(0, 123));
  }

  /** Writes one masked frame upstream, after the ones before it. */
  #sendUpstream(opcode: number, payload: Uint8Array): void {
    if (this.#ended) return;
    const refusal = this.#toUpstream.send(opcode, payload);
    if (refusal === null) return;
    this.#fail(
      new UpstreamError(
        `upstream is not reading: ${refusal.queuedBytes} bytes queued, ` +
          `${refusal.refused} more refused`,
        { kind: "unknown", action: "proxying upgraded connection" },
      ),
      1008,
    );
  }

  /** Sends a message to the client, or holds it until the client's side opens. */
  #toClient(data: Message): void {
    const size = this.#messages.lastMessageBytes;
    this.#bytesToClient += frameSize(size);
    this.#toBrowser.send(data, size);
    // Past the high-water mark, the frames left in this read wait: one read
    // of empty messages is 32,768 of them.
    if (this.#behind()) this.#stalled = true;
  }

  /** Handles the upstream's frames: control frames, then whole messages. */
  #onFrames(bytes: Uint8Array): void {
    this.#parser.parse(bytes, this.#onFrame);
  }

  /** One upstream frame; `true` once the tunnel has ended (stop reading). */
  #onFrame = (frame: Frame): boolean => {
    switch (frame.opcode) {
      case OPCODE.ping:
        this.#sendUpstream(OPCODE.pong, frame.payload);
        break;
      case OPCODE.pong:
        break;
      case OPCODE.close: {
        const { code, reason } = parseClosePayload(frame.payload);
        this.#sendUpstream(OPCODE.close, frame.payload);
        this.#finish(code, reason);
        return true;
      }
      default: {
        const message = this.#messages.add(frame);
        if (message !== null) this.#toClient(message);
      }
    }
    return this.#ended || this.#stalled;
  };

  /** Restarts the idle timer: nginx's `proxy_read_timeout` on a tunnel. */
  #armIdle(): void {
    clearTimeout(this.#idle);
    if (this.#paused || this.#ended) return;
    this.#idle = setTimeout(() => {
      this.#options.onLateFailure(upstreamTimeoutWhileProxying(), this.#field);
      this.#finish(1001, "idle");
    }, this.#options.timeouts.readMs);
  }

  /** Ends both sides once, and reports the bytes sent to the client. */
  #finish(code?: number, reason?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#idle);
    clearTimeout(this.#opening);
    tunnelCounters.parserBytesCopied += this.#parser.bytesCopied;
    this.#toBrowser.clear();
    const client = this.#client;
    const bare = code === undefined || code === 1005 || code === 1006;
    const closeClient = () => {
      try {
        if (bare) client.close();
        else client.close(code, reason);
      } catch {
        client.close();
      }
    };
    if (client.readyState < WebSocket.CLOSING) {
      this.#bytesToClient += frameSize(
        bare ? 0 : closePayload(code, reason).length,
      );
      // Closing a socket not yet open would drop the code: wait for it.
      if (client.readyState === WebSocket.CONNECTING) {
        client.onopen = closeClient;
      } else closeClient();
    }
    this.#toUpstream.close();
    this.#options.onClosed(this.#bytesToClient);
  }
}

/**
 * A server frame's size on the wire: nginx's `$body_bytes_sent` for a tunnel
 * counts every byte relayed after the 101, frame headers included.
 */
function frameSize(payload: number): number {
  return payload + (payload < 126 ? 2 : payload < 65536 ? 4 : 10);
}

/** nginx's line when an upgraded connection sits idle past the read timeout. */
function upstreamTimeoutWhileProxying(): UpstreamError {
  const base = upstreamTimeout("reading upstream");
  return new UpstreamError(base.message, {
    kind: "timed-out",
    // nginx: "while proxying upgraded connection" (ngx_http_upstream.c).
    action: "proxying upgraded connection",
    ...(base.osError ? { osError: base.osError } : {}),
  });
}

/**
 * nginx's line when the client takes nothing for `send_timeout`: logged at
 * info, as nginx logs client-side errors, and not the upstream's failure.
 */
function clientTimedOut(): UpstreamError {
  const base = upstreamTimeout("reading upstream");
  return new UpstreamError("client timed out", {
    kind: "client-closed",
    action: "proxying upgraded connection",
    level: "info",
    ...(base.osError ? { osError: base.osError } : {}),
  });
}
