/**
 * The seam between the proxy and the upstream: what the proxy asks of one
 * server. {@linkcode UpstreamClient} (`upstream/client.ts`) is the real
 * transport, an HTTP/1.1 client with a connection pool; tests hand the
 * handler a fake one, as Caddy's handler tests drive `ServeHTTP` with a test
 * `http.RoundTripper`.
 *
 * @module
 */

import type {
  UpstreamCall,
  UpstreamReply,
  UpstreamServerSpec,
} from "./types.ts";

/**
 * One server's transport. `send` resolves with the upstream's reply, or
 * rejects with an `UpstreamError` that names the failure and its phase in
 * nginx's words (`connect() failed … while connecting to upstream`); any
 * other rejection is a bug and is logged as one. An exchange that ends after
 * its head is told to `call.onEnd` (the server is freed then); a fake that
 * never tells it leaves its servers counted, which only `least_conn` reads.
 */
export interface UpstreamTransport {
  /** Sends one request and returns the reply's head and body. */
  send(call: UpstreamCall): Promise<UpstreamReply>;
  /** Idle pooled connections, for the status endpoint. */
  readonly idleCount: number;
  /** Closes the idle connections; later calls may open new ones. */
  close(): void;
}

/** Makes the transport for one server of the group. */
export type TransportFactory = (spec: UpstreamServerSpec) => UpstreamTransport;
