/**
 * WebSocket through `/api/`: the browser's side is `Deno.upgradeWebSocket`;
 * the upstream's side is the gateway's own client (the handshake over
 * `Deno.connect`, then RFC 6455 frames), so a refused upstream writes the
 * same `connect() failed` line as any request and a non-101 answer (426,
 * 403) reaches the browser as nginx relays it. Deno's `WebSocket` client
 * could do neither: it reports only "tcp connect error".
 *
 * Messages, subprotocol, ping/pong and close codes cross in both directions;
 * either side closing ends both. A tunnel idle for `proxy_read_timeout` is
 * closed with nginx's `upstream timed out … while proxying upgraded
 * connection` line.
 *
 * @module
 */

import type { GatewayConfig } from "../config/mod.ts";
import { upstreamRequestHeaders } from "./headers.ts";
import {
  type ProxyOptions,
  type ProxyResult,
  replyToResponse,
} from "./proxy.ts";
import { tryPeers, upstreamField } from "../upstream/mod.ts";
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

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/**
 * Whether a request asks for a WebSocket (RFC 6455 §4.1).
 *
 * @param req The request.
 * @returns Whether to tunnel it.
 */
export function isWebSocketRequest(req: Request): boolean {
  return req.method === "GET" &&
    req.headers.get("upgrade")?.toLowerCase() === "websocket" &&
    req.headers.has("sec-websocket-key");
}

async function acceptFor(key: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-1",
    new TextEncoder().encode(key + WS_GUID),
  );
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

/** Options beyond the HTTP proxy's; a tunnel idle `timeouts.readMs` is closed. */
export interface WebSocketOptions extends
  Pick<
    ProxyOptions,
    | "group"
    | "upstreamPath"
    | "clientAddress"
    | "addForwardedHeaders"
    | "publicApiBase"
    | "onAttemptError"
  >,
  Pick<GatewayConfig, "timeouts"> {
  /** Told when a tunnel ends, with the frame bytes sent to the client. */
  onClosed: (bytesToClient: number) => void;
  /** Told about a tunnel failure, with the `upstream:` field. */
  onTunnelError: (error: UpstreamError, upstream: string) => void;
}

/** What a server's answer to the handshake turned out to be. */
type Handshake =
  | { kind: "answer"; response: Response }
  | {
    kind: "tunnel";
    reply: UpstreamReply;
    field: string;
    protocol: string | undefined;
  };

/**
 * Opens a WebSocket to the upstream and joins it to the client's.
 *
 * @param req The client's upgrade request.
 * @param options Where to go and what to report.
 * @returns The 101 response (or the upstream's non-101 answer), or the
 * failure.
 */
export async function proxyWebSocket(
  req: Request,
  options: WebSocketOptions,
): Promise<ProxyResult> {
  const headers = upstreamRequestHeaders(req.headers, {
    clientAddress: options.clientAddress,
    addForwardedHeaders: options.addForwardedHeaders,
  });
  const key = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))),
  );
  // Our own handshake: the client's key, version and extensions (no
  // compression upstream) stay on the browser's side of the tunnel.
  const ours = new Set([
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
  ]);
  const handshake: [string, string][] = [
    ...headers.filter(([name]) => !ours.has(name)),
    ["upgrade", "websocket"],
    ["connection", "Upgrade"],
    ["sec-websocket-key", key],
    ["sec-websocket-version", "13"],
  ];

  const expected = await acceptFor(key);
  // Judged inside tryPeers, so an answer that cannot be relayed and a
  // handshake that does not match are logged and counted as that server's
  // failure, like any other (every failure reaches the log).
  const outcome = await tryPeers(options.group, {
    method: "GET",
    upstreamPath: options.upstreamPath,
    streamedBody: false,
    onAttemptError: options.onAttemptError,
  }, (peer) =>
    peer.client.send({
      method: "GET",
      path: options.upstreamPath,
      host: peer.spec.address.origin.slice("http://".length),
      headers: handshake,
      body: null,
      signal: req.signal,
      upgrade: true,
      onBodyError: (error) =>
        options.onAttemptError(
          error,
          upstreamField(peer, options.upstreamPath),
          false,
        ),
    }), (reply, peer): Handshake => {
    if (!reply.upgraded) {
      return {
        kind: "answer",
        response: replyToResponse(reply, peer, options.publicApiBase),
      };
    }
    const fields = new Map(
      reply.head.fields.map(([k, v]) => [k.toLowerCase(), v]),
    );
    if (fields.get("sec-websocket-accept") !== expected) {
      reply.upgraded.conn.close();
      throw new UpstreamError("upstream sent invalid header", {
        kind: "invalid-response",
        action: "reading response header from upstream",
      });
    }
    return {
      kind: "tunnel",
      reply,
      field: upstreamField(peer, options.upstreamPath),
      protocol: fields.get("sec-websocket-protocol"),
    };
  });
  if (outcome.kind !== "ok") return outcome;
  const settled = outcome.value;
  if (settled.kind === "answer") {
    return { kind: "response", response: settled.response };
  }
  const { reply, field, protocol } = settled;
  const { socket, response } = Deno.upgradeWebSocket(
    req,
    protocol ? { protocol } : {},
  );
  bridge(socket, reply, field, options);
  return { kind: "response", response };
}

function bridge(
  client: WebSocket,
  reply: UpstreamReply,
  field: string,
  options: WebSocketOptions,
): void {
  const { conn, rest } = reply.upgraded!;
  client.binaryType = "arraybuffer";
  const parser = new FrameParser();
  let writes = Promise.resolve();
  let ended = false;
  let bytesToClient = 0;
  let fragments: Uint8Array[] = [];
  let fragmentOpcode: number = OPCODE.text;
  const pending: (string | Uint8Array)[] = [];
  let clientOpen = false;
  let idle: ReturnType<typeof setTimeout> | undefined;

  const send = (opcode: number, payload: Uint8Array) => {
    const frame = encodeFrame(
      opcode,
      payload,
      crypto.getRandomValues(new Uint8Array(4)),
    );
    writes = writes.then(async () => {
      let n = 0;
      while (n < frame.length) n += await conn.write(frame.subarray(n));
    }).catch(() => finish());
  };
  const toClient = (data: string | Uint8Array) => {
    bytesToClient += frameSize(
      typeof data === "string"
        ? new TextEncoder().encode(data).length
        : data.length,
    );
    if (clientOpen) client.send(data);
    else pending.push(data);
  };
  const finish = (code?: number, reason?: string) => {
    if (ended) return;
    ended = true;
    clearTimeout(idle);
    if (client.readyState < WebSocket.CLOSING) {
      const bare = code === undefined || code === 1005 || code === 1006;
      try {
        if (bare) client.close();
        else client.close(code, reason);
        bytesToClient += frameSize(
          bare ? 0 : closePayload(code, reason).length,
        );
      } catch {
        client.close();
        bytesToClient += frameSize(0);
      }
    }
    // Give a close frame a moment to leave, then drop the connection.
    writes.finally(() => setTimeout(() => conn.close(), 50));
    options.onClosed(bytesToClient);
  };
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      options.onTunnelError(
        upstreamTimeoutWhileProxying(),
        field,
      );
      finish(1001, "idle");
    }, options.timeouts.readMs);
  };

  client.onopen = () => {
    clientOpen = true;
    for (const data of pending.splice(0)) client.send(data);
  };
  client.onmessage = (event) => {
    armIdle();
    if (typeof event.data === "string") {
      send(OPCODE.text, new TextEncoder().encode(event.data));
    } else {
      send(OPCODE.binary, new Uint8Array(event.data as ArrayBuffer));
    }
  };
  client.onclose = (event) => {
    if (ended) return;
    // Deno answered the client's close frame with its payload (RFC 6455
    // §5.5.1).
    bytesToClient += frameSize(
      closePayload(event.code === 1005 ? undefined : event.code, event.reason)
        .length,
    );
    send(
      OPCODE.close,
      closePayload(event.code === 1005 ? undefined : event.code, event.reason),
    );
    finish();
  };

  const onFrames = (bytes: Uint8Array) => {
    for (const frame of parser.push(bytes)) {
      switch (frame.opcode) {
        case OPCODE.ping:
          send(OPCODE.pong, frame.payload);
          break;
        case OPCODE.pong:
          break;
        case OPCODE.close: {
          const { code, reason } = parseClosePayload(frame.payload);
          send(OPCODE.close, frame.payload);
          finish(code, reason);
          return;
        }
        default: {
          if (frame.opcode !== OPCODE.continuation) {
            fragmentOpcode = frame.opcode;
            fragments = [];
          }
          fragments.push(frame.payload);
          if (!frame.fin) break;
          const size = fragments.reduce((n, f) => n + f.length, 0);
          const whole = new Uint8Array(size);
          fragments.reduce((at, f) => (whole.set(f, at), at + f.length), 0);
          fragments = [];
          toClient(
            fragmentOpcode === OPCODE.text
              ? new TextDecoder().decode(whole)
              : whole,
          );
        }
      }
    }
  };

  (async () => {
    armIdle();
    try {
      if (rest.length > 0) onFrames(rest);
      const buf = new Uint8Array(64 * 1024);
      while (!ended) {
        const n = await conn.read(buf);
        if (n === null) break;
        armIdle();
        onFrames(buf.subarray(0, n));
      }
      finish();
    } catch (error) {
      if (error instanceof FrameError) {
        send(OPCODE.close, closePayload(error.code, error.message));
        finish(error.code, "upstream protocol error");
      } else {
        finish();
      }
    }
  })();
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
