/**
 * How the request is read onto the gateway's settings: nginx's
 * `client_body_timeout`, `client_body_buffer_size`, `client_body_temp_path`
 * and `proxy_request_buffering` (from the proxied location), and
 * `large_client_header_buffers` (from the server).
 *
 * @module
 */

import { last, type Levels, type Sink } from "./sink.ts";
import { sizeSetting, timeSetting } from "./values.ts";

/**
 * Maps the request-reading directives.
 *
 * @param sink Where settings and findings go.
 * @param server The directives in effect in the `server {}` block.
 * @param proxied The directives in effect in the proxied location.
 */
export function mapRequestReading(
  sink: Sink,
  server: Levels,
  proxied: Levels,
): void {
  const s = sink.settings;
  const timeout = last(proxied, "client_body_timeout");
  if (timeout !== undefined) {
    const value = timeSetting(timeout.name, timeout.args[0]!);
    s.clientBodyTimeout = value.ok ? value.value : sink.emerg(
      timeout,
      value.error,
    );
  }
  const buffer = last(proxied, "client_body_buffer_size");
  if (buffer !== undefined) {
    const value = sizeSetting(buffer.name, buffer.args[0]!);
    s.clientBodyBufferSize = value.ok
      ? value.value
      : sink.emerg(buffer, value.error);
  }
  const temp = last(proxied, "client_body_temp_path");
  if (temp !== undefined) {
    if (temp.args.length > 1) {
      sink.warn(
        temp,
        `"client_body_temp_path ${
          temp.args.join(" ")
        }": the gateway keeps its files in the folder itself, without levels`,
      );
    }
    s.clientBodyTempPath = sink.path(temp, temp.args[0]!);
  }
  const buffering = last(proxied, "proxy_request_buffering");
  if (buffering !== undefined) {
    s.proxyRequestBuffering = buffering.args[0]!.toLowerCase();
  }
  const headers = last(server, "large_client_header_buffers");
  if (headers !== undefined) {
    const size = sizeSetting(headers.name, headers.args[1]!);
    if (!/^\d+$/.test(headers.args[0]!) || !size.ok) {
      sink.emerg(headers, `"${headers.name}" directive invalid value`);
    } else {
      s.largeClientHeaderBuffers = `${headers.args[0]} ${size.value}`;
    }
  }
}
