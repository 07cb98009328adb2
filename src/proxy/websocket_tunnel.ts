/**
 * An open WebSocket tunnel: the browser's socket on one side, RFC 6455
 * frames over the upstream's connection on the other. Messages, ping/pong
 * and close codes cross in both directions; either side closing ends both.
 * A tunnel idle for `proxy_read_timeout` is closed with nginx's `upstream
 * timed out … while proxying upgraded connection` line.
 *
 * @module
 */

import type { GatewayConfig } from "../config/mod.ts";
import type { UpstreamReply } from "../upstream/mod.ts";
import { UpstreamError, upstreamTimeout } from "../upstream/mod.ts";
import {
  closePayload,
  encodeFrame,
  FrameError,
  FrameParser,
  OPCODE,
  parseClosePayload,
} from "./websocket_frames.ts";

/** What a tunnel reads and reports; idle `timeouts.readMs`, it is closed. */
export interface TunnelOptions extends Pick<GatewayConfig, "timeouts"> {
  /** Told when a tunnel ends, with the frame bytes sent to the client. */
  onClosed: (bytesToClient: number) => void;
  /** Told about a tunnel failure, with the `upstream:` field. */
  onLateFailure: (error: UpstreamError, upstream: string) => void;
}

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
  #writes = Promise.resolve();
  #ended = false;
  #bytesToClient = 0;
  #fragments: Uint8Array[] = [];
  #fragmentOpcode: number = OPCODE.text;
  /** Messages from upstream before the client's side has opened. */
  #pending: (string | Uint8Array)[] = [];
  #clientOpen = false;
  #idle: ReturnType<typeof setTimeout> | undefined;

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
    client.binaryType = "arraybuffer";
  }

  /** Relays the client's side: open, messages, close. */
  listen(): void {
    const client = this.#client;
    client.onopen = () => {
      this.#clientOpen = true;
      for (const data of this.#pending.splice(0)) client.send(data);
    };
    client.onmessage = (event) => {
      this.#armIdle();
      if (typeof event.data === "string") {
        this.#sendUpstream(OPCODE.text, new TextEncoder().encode(event.data));
      } else {
        this.#sendUpstream(
          OPCODE.binary,
          new Uint8Array(event.data as ArrayBuffer),
        );
      }
    };
    client.onclose = (event) => {
      if (this.#ended) return;
      // Deno answered the client's close frame with its payload (RFC 6455
      // §5.5.1).
      const payload = closePayload(
        event.code === 1005 ? undefined : event.code,
        event.reason,
      );
      this.#bytesToClient += frameSize(payload.length);
      this.#sendUpstream(OPCODE.close, payload);
      this.#finish();
    };
  }

  /**
   * Reads the upstream's side until it closes, starting with the bytes that
   * came after the handshake.
   *
   * @param rest Bytes read past the 101 response's head.
   */
  async pump(rest: Uint8Array): Promise<void> {
    this.#armIdle();
    try {
      if (rest.length > 0) this.#onFrames(rest);
      const buf = new Uint8Array(64 * 1024);
      while (!this.#ended) {
        const n = await this.#conn.read(buf);
        if (n === null) break;
        this.#armIdle();
        this.#onFrames(buf.subarray(0, n));
      }
      this.#finish();
    } catch (error) {
      if (error instanceof FrameError) {
        this.#sendUpstream(
          OPCODE.close,
          closePayload(error.code, error.message),
        );
        this.#finish(error.code, "upstream protocol error");
      } else {
        this.#finish();
      }
    }
  }

  /** Writes one masked frame upstream, after the ones before it. */
  #sendUpstream(opcode: number, payload: Uint8Array): void {
    const frame = encodeFrame(
      opcode,
      payload,
      crypto.getRandomValues(new Uint8Array(4)),
    );
    const conn = this.#conn;
    this.#writes = this.#writes.then(async () => {
      let n = 0;
      while (n < frame.length) n += await conn.write(frame.subarray(n));
    }).catch(() => this.#finish());
  }

  /** Sends a message to the client, or holds it until the client's side opens. */
  #toClient(data: string | Uint8Array): void {
    this.#bytesToClient += frameSize(
      typeof data === "string"
        ? new TextEncoder().encode(data).length
        : data.length,
    );
    if (this.#clientOpen) this.#client.send(data);
    else this.#pending.push(data);
  }

  /** Handles the upstream's frames: control frames, then whole messages. */
  #onFrames(bytes: Uint8Array): void {
    for (const frame of this.#parser.push(bytes)) {
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
          return;
        }
        default:
          this.#collect(frame.opcode, frame.payload, frame.fin);
      }
    }
  }

  /** Joins a message's fragments and relays it once the last one came. */
  #collect(opcode: number, payload: Uint8Array, fin: boolean): void {
    if (opcode !== OPCODE.continuation) {
      this.#fragmentOpcode = opcode;
      this.#fragments = [];
    }
    this.#fragments.push(payload);
    if (!fin) return;
    const fragments = this.#fragments;
    const size = fragments.reduce((n, f) => n + f.length, 0);
    const whole = new Uint8Array(size);
    fragments.reduce((at, f) => (whole.set(f, at), at + f.length), 0);
    this.#fragments = [];
    this.#toClient(
      this.#fragmentOpcode === OPCODE.text
        ? new TextDecoder().decode(whole)
        : whole,
    );
  }

  /** Restarts the idle timer: nginx's `proxy_read_timeout` on a tunnel. */
  #armIdle(): void {
    clearTimeout(this.#idle);
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
    const client = this.#client;
    if (client.readyState < WebSocket.CLOSING) {
      const bare = code === undefined || code === 1005 || code === 1006;
      try {
        if (bare) client.close();
        else client.close(code, reason);
        this.#bytesToClient += frameSize(
          bare ? 0 : closePayload(code, reason).length,
        );
      } catch {
        client.close();
        this.#bytesToClient += frameSize(0);
      }
    }
    // Give a close frame a moment to leave, then drop the connection.
    const conn = this.#conn;
    this.#writes.finally(() => setTimeout(() => conn.close(), 50));
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
