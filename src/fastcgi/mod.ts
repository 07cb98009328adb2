/**
 * FastCGI (`ngx_http_fastcgi_module`): a location's content handler that
 * passes the request to a FastCGI responder (PHP's `php-cgi -b` or
 * PHP-FPM) over TCP, with nginx's parameters, records, CGI head rules,
 * limits and lines. The walk over the group's servers, the request body's
 * reading and the failure lines are the proxy's (`proxy/`); only the
 * transport and the reply's relay are FastCGI's.
 *
 * @module
 */

import type { UpstreamConf } from "../engine/mod.ts";
import { UpstreamRegistry } from "../proxy/mod.ts";
import { FastcgiTransport } from "./client.ts";

export { type FastcgiContext, fastcgiLocation } from "./handler.ts";
export { parseCgiHead } from "./cgi_head.ts";
export { encodeRequestHead, stdinRecords } from "./records.ts";
export { RecordDecoder, type RecordEvent } from "./record_decoder.ts";
export { fieldKey, httpParamName, requestParams } from "./params.ts";

const DEFAULT_TIMEOUTS = { connectMs: 60_000, sendMs: 60_000, readMs: 60_000 };

/**
 * The groups `fastcgi_pass` names, each server with a FastCGI transport.
 *
 * @param upstreams `HttpConf.fastcgiUpstreams`.
 * @param options The connection counter and the groups' clock (tests).
 * @returns The registry.
 *
 * @example Usage
 * ```ts
 * import { fastcgiRegistry } from "./mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const registry = fastcgiRegistry(new Map([["127.0.0.1:9000", {
 *   name: "127.0.0.1:9000", keepalive: 0, explicit: false,
 *   servers: [{ address: "127.0.0.1:9000", hostname: "127.0.0.1", port: 9000,
 *     weight: 1, maxFails: 1, failTimeoutMs: 10_000, backup: false, down: false }],
 * }]]));
 * strictEqual(registry.get("127.0.0.1:9000")?.peers.length, 1);
 * registry.close();
 * ```
 */
export function fastcgiRegistry(
  upstreams: ReadonlyMap<string, UpstreamConf>,
  options: { onConnect?: () => void; now?: () => number } = {},
): UpstreamRegistry {
  return new UpstreamRegistry(upstreams, {
    transport: (spec) =>
      new FastcgiTransport(spec, DEFAULT_TIMEOUTS, options.onConnect),
    ...(options.now ? { now: options.now } : {}),
  });
}
