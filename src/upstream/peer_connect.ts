/**
 * Opening a new connection to an upstream peer as nginx does
 * (`ngx_event_connect_peer`): one deadline for the whole connect
 * (`proxy_connect_timeout`), the client's close abandoning it, and the
 * failure named in nginx's words. Nagle is off: the request head goes out
 * at once.
 *
 * @module
 */

import type { OsFamily } from "../runtime/mod.ts";
import { type ClientWatch, Connection, NOTHING } from "./connection.ts";
import {
  UpstreamError,
  upstreamErrorFromOs,
  upstreamTimeout,
} from "./error.ts";
import type { UpstreamClientOptions } from "./types.ts";

/**
 * Connects to the peer, within `connectMs`.
 *
 * @param watch The client's: its close aborts the connect.
 * @param to `peer`: the peer's address and `onConnect`; `connectMs`: the
 * deadline; `family`: the OS family its errors are named for.
 * @returns The connection.
 * @throws {UpstreamError} When the client left, the deadline passed, or the
 * OS refused.
 */
export async function connectPeer(
  watch: ClientWatch,
  { peer, connectMs, family }: {
    peer: Pick<UpstreamClientOptions, "hostname" | "port" | "onConnect">;
    connectMs: number;
    family: OsFamily;
  },
): Promise<Connection> {
  if (watch.aborted) throw UpstreamError.clientClosed();
  peer.onConnect?.();
  const timer = new AbortController();
  const id = setTimeout(() => timer.abort(), connectMs);
  // The client's close does not abort the connect op: an op aborted as it
  // completed left its socket in the runtime with no owner (in CLOSE-WAIT
  // for good once the upstream gave up: about half of a hundred WebSocket
  // handshakes whose client closed at once). The connect is given up on
  // instead, and its socket closed whenever it comes.
  const connecting = Deno.connect({
    hostname: peer.hostname,
    port: peer.port,
    signal: timer.signal,
  });
  const left = Promise.withResolvers<null>();
  watch.onAbort = () => left.resolve(null);
  try {
    const conn = await Promise.race([connecting, left.promise]);
    if (conn === null || watch.aborted) {
      connecting.then((late) => late.close(), () => {});
      throw UpstreamError.clientClosed();
    }
    conn.setNoDelay(true);
    return new Connection(conn);
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    if (watch.aborted) throw UpstreamError.clientClosed(error);
    if (timer.signal.aborted) {
      throw upstreamTimeout("connecting to upstream", family);
    }
    throw upstreamErrorFromOs(error, "connecting to upstream", family, {
      upstreamHost: peer.hostname,
    });
  } finally {
    clearTimeout(id);
    watch.onAbort = NOTHING;
  }
}
