/**
 * WebSocket through a location that asks for one (`Upgrade` and
 * `Connection: upgrade` set): the browser's side is `Deno.upgradeWebSocket`;
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

import { dropReply, recorded } from "./proxy.ts";
import type { ProxyOptions, ProxyResult } from "./proxy_options.ts";
import { PeerHold, tryPeers, upstreamField } from "../upstream/mod.ts";
import type { UpstreamReply } from "../upstream/mod.ts";
import { UpstreamError } from "../upstream/mod.ts";
import { bridge, type TunnelOptions } from "./websocket_tunnel.ts";
import { listHas } from "../routing/mod.ts";
import { firstLine } from "../runtime/mod.ts";

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/**
 * Whether a request asks for a WebSocket (RFC 6455 §4.2.1): a GET whose
 * `Upgrade` lists `websocket` and whose `Connection` lists `upgrade`, with a
 * key. `Upgrade` alone is not enough: the RFC requires both, and
 * `Deno.upgradeWebSocket` would refuse the browser's side only after the
 * upstream's had been opened. The station's nginx (`proxy_set_header
 * Connection "upgrade"`) would tunnel such a request if the upstream
 * answered 101; browsers always send both, so only a hand-made client sees
 * the difference: its request goes upstream as a plain GET.
 *
 * @param req The request.
 * @returns Whether to tunnel it.
 *
 * @example Usage
 * ```ts
 * import { isWebSocketRequest } from "./websocket_proxy.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = { upgrade: "websocket", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" };
 * strictEqual(isWebSocketRequest(new Request("http://h/", { headers })), false);
 * strictEqual(isWebSocketRequest(new Request("http://h/", { headers: { ...headers, connection: "keep-alive, Upgrade" } })), true);
 * ```
 */
export function isWebSocketRequest(req: Request): boolean {
  // The list parser skips the whitespace Deno's check skips, no more: a
  // request called an upgrade here is one Deno upgrades (routing/field_lists.ts).
  // Both fields are read on every line, joined. `Connection` is a list
  // field (RFC 9110 §5.3), and nginx reads each of its lines
  // (ngx_http_process_connection). nginx sends the first `Upgrade` line
  // upstream ($http_upgrade) and tunnels on the upstream's 101 whatever it
  // said; Deno upgrades a request whose lines list `websocket` anywhere,
  // so `Upgrade: foo` then `Upgrade: websocket` is tunnelled as nginx does.
  return req.method === "GET" &&
    listHas(req.headers.get("upgrade"), "websocket") &&
    listHas(req.headers.get("connection"), "upgrade") &&
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
    | "onFailure"
    | "onWarning"
    | "headers"
    | "call"
    | "toResponse"
    | "tries"
    | "client"
    | "key"
    | "next"
  >,
  Pick<TunnelOptions, "timeouts" | "onClosed"> {
  /**
   * The runtime's upgrade of the client's side, `Deno.upgradeWebSocket`
   * unless a test stands in for it (its refusals).
   */
  upgrade?: (req: Request) => Deno.WebSocketUpgrade;
}

/** What a server's answer to the handshake turned out to be. */
type Handshake =
  | { kind: "answer"; response: Response }
  | {
    kind: "tunnel";
    reply: UpstreamReply;
    field: string;
    /** The upstream's `Sec-WebSocket-Protocol` fields, relayed as they are. */
    protocols: string[];
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
  // The location's fields carry its Upgrade and Connection (in
  // `call.leading`). The client's key goes upstream, as nginx passes it:
  // the accept the upstream computes is the one the browser checks too.
  // The version is ours (13, the one Deno accepts), and extensions stay on
  // the browser's side: the tunnel does not compress.
  // A key on several lines: its first, as nginx 1.22 reads a repeated
  // field (runtime/field_lines.ts), and the upstream reading the first of
  // those nginx relays answers for it; the browser is told that accept.
  const { headers } = options;
  const key = firstLine(
    req.headers,
    "sec-websocket-key",
    req.headers.get("sec-websocket-key"),
  ) ??
    btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  const ours = new Set([
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
  ]);
  const handshake: (readonly [string, string])[] = [
    ...headers.filter(([name]) => !ours.has(name)),
    ["sec-websocket-key", key],
    ["sec-websocket-version", "13"],
  ];

  const expected = await acceptFor(key);
  // Judged inside tryPeers, so an answer that cannot be relayed and a
  // handshake that does not match are logged and counted as that server's
  // failure, like any other (every failure reaches the log).
  const tries = options.tries ?? null;
  const { onFailure, toResponse } = recorded(options, tries);
  // The server is held through the tunnel, freed when it closes (nginx
  // finalizes the upstream then).
  const hold = new PeerHold(options.group);
  const outcome = await tryPeers<UpstreamReply, Handshake>(options.group, {
    method: "GET",
    upstreamPath: options.upstreamPath,
    streamedBody: false,
    client: options.client,
    key: options.key,
    onFailure,
    hold,
    next: options.next,
    answers: {
      statusOf: (reply) => reply.head.status,
      drop: (reply, dropped) => dropReply(reply, dropped, options),
    },
  }, (peer) => {
    tries?.begin(peer.spec.address.peer);
    return peer.client.send({
      method: "GET",
      path: options.upstreamPath,
      host: peer.spec.address.origin.slice("http://".length),
      headers: handshake,
      body: null,
      signal: req.signal,
      ...options.call,
      upgrade: true,
      tryIndex: hold.tryIndex,
      onEnd: hold.free,
      onConnected: tries?.connected,
      onBodyError: (error) =>
        onFailure({
          error,
          upstream: upstreamField(peer, options.upstreamPath),
          disabled: false,
        }),
      onBodyWarning: (message) =>
        options.onWarning({
          message,
          upstream: upstreamField(peer, options.upstreamPath),
        }),
    });
  }, (reply, peer): Handshake => {
    if (!reply.upgraded) {
      return { kind: "answer", response: toResponse(reply, peer) };
    }
    const fields = new Map(
      reply.head.fields.map(([k, v]) => [k.toLowerCase(), v]),
    );
    if (fields.get("sec-websocket-accept") !== expected) {
      closeQuietly(reply.upgraded.conn);
      throw new UpstreamError("upstream sent invalid header", {
        kind: "invalid-response",
        action: "reading response header from upstream",
      });
    }
    tries?.answered(101);
    return {
      kind: "tunnel",
      reply,
      field: upstreamField(peer, options.upstreamPath),
      protocols: reply.head.fields
        .filter(([k]) => k.toLowerCase() === "sec-websocket-protocol")
        .map(([, v]) => v),
    };
  });
  if (outcome.kind === "no-live") tries?.noLive(options.group.name);
  if (outcome.kind !== "ok") return outcome;
  const settled = outcome.value;
  if (settled.kind === "answer") {
    return {
      kind: "response",
      response: settled.response,
    };
  }
  const { reply, field, protocols } = settled;
  if (req.signal.aborted) {
    // The client left while the upstream answered. Deno's upgrade of such
    // a request never settles: its socket fires neither `open` nor `close`
    // and `Deno.serve`'s shutdown waits for it. So the upstream's side is
    // closed here, as nginx closes it when the client goes first
    // (`ngx_http_upstream_check_broken_connection`).
    closeQuietly(reply.upgraded!.conn);
    hold.free();
    const error = UpstreamError.clientClosed();
    onFailure({ error, upstream: field, disabled: false });
    return { kind: "failed", error };
  }
  let upgraded: Deno.WebSocketUpgrade;
  try {
    // The upstream's subprotocol is relayed as nginx relays it: whatever it
    // chose, offered or not (a browser fails a connection whose protocol it
    // did not offer; another client may not care). Deno's `protocol`
    // option is not used: it splits the client's list at ", " alone, so
    // `chat,superchat` offered nothing, and refuses a protocol not offered,
    // both after the upstream had answered.
    upgraded = (options.upgrade ?? Deno.upgradeWebSocket)(req);
    // Deno's accept is of the key's lines joined: the browser gets the one
    // the upstream answered (the first line's), as nginx relays it.
    upgraded.response.headers.set("sec-websocket-accept", expected);
    for (const protocol of protocols) {
      upgraded.response.headers.append("sec-websocket-protocol", protocol);
    }
  } catch (thrown) {
    // The runtime refused the client's side after the upstream accepted:
    // its side is closed and freed, and the client gets nginx's page for
    // an answer that cannot be relayed, with the runtime's words logged.
    closeQuietly(reply.upgraded!.conn);
    hold.free();
    const error = upgradeRefused(thrown);
    onFailure({ error, upstream: field, disabled: false });
    return { kind: "failed", error };
  }
  const { socket, response } = upgraded;
  bridge(socket, reply, field, {
    timeouts: options.timeouts,
    onClosed: (bytesToClient) => {
      hold.free();
      options.onClosed(bytesToClient);
    },
    onLateFailure: (error, upstream) =>
      onFailure({ error, upstream, disabled: false }),
  });
  return { kind: "response", response };
}

/** The runtime's refusal of the client's upgrade, as the request's failure. */
function upgradeRefused(thrown: unknown): UpstreamError {
  const detail = thrown instanceof Error ? thrown.message : String(thrown);
  return new UpstreamError(
    `client's WebSocket upgrade refused by the runtime: ${detail}`,
    {
      kind: "unknown",
      action: "reading response header from upstream",
      cause: thrown,
    },
  );
}

/**
 * Closes the upstream's upgraded connection, which the client's going may
 * have closed already: the watch on the client (`ClientWatch`) closes it
 * when the abort comes after the 101 was read.
 */
function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}
