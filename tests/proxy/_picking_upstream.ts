/**
 * A WebSocket upstream for the subprotocol tests, side by side with nginx
 * and the gateway's own.
 *
 * @module
 */
import { readHead, startRawUpstream, writeText } from "../_utils.ts";

/**
 * A WebSocket upstream: 101 with the protocol the request's `X-Pick`
 * names, then it waits until the proxy closes.
 *
 * @returns The upstream, to dispose.
 */
export function pickingUpstream(): ReturnType<typeof startRawUpstream> {
  return startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const key = /sec-websocket-key: *(\S+)/i.exec(head)![1]!;
    const pick = /x-pick: *([^\r]*)/i.exec(head)?.[1] ?? "";
    const digest = await crypto.subtle.digest(
      "SHA-1",
      new TextEncoder().encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
    );
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    await writeText(
      conn,
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" +
        `Connection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n` +
        (pick === "" ? "" : `Sec-WebSocket-Protocol: ${pick}\r\n`) + "\r\n",
    );
    await readHead(conn); // until the proxy closes
  });
}
