/**
 * The gateway's bounds on what a configuration may ask for, one constant
 * each, read by the flags and the config file (`config.ts`) and by an
 * nginx.conf (`nginx_conf/`): each bounds memory a peer can make the
 * gateway hold, where nginx takes more.
 *
 * @module
 */

/**
 * The most idle connections an upstream keeps (`keepalive`,
 * `--upstream-keepalive`): each holds a socket and its buffers (about
 * 16 KB).
 */
export const MAX_UPSTREAM_KEEPALIVE = 1024;

/**
 * The largest total weight of a `hash … consistent` group: it makes 160
 * points per weight unit, held for the process's life (nginx has no bound).
 */
export const MAX_CONSISTENT_HASH_WEIGHT = 1000;

/**
 * The largest `proxy_buffer_size` (`--proxy-buffer-size`): the head an
 * upstream may make the gateway hold per request grows up to it.
 */
export const MAX_PROXY_BUFFER_SIZE = 1024 * 1024;

/**
 * The largest `client_body_buffer_size` (`--client-body-buffer-size`): a
 * body is held in memory per request up to it before it goes to a file.
 */
export const MAX_CLIENT_BODY_BUFFER_SIZE = 64 * 1024 * 1024;

/**
 * The most `large_client_header_buffers` (`--large-client-header-buffers`):
 * a client's head may fill that many per request.
 */
export const MAX_HEADER_BUFFERS = 1024;

/** The largest of those buffers: the longest request or header line. */
export const MAX_HEADER_BUFFER_SIZE = 1024 * 1024;

/**
 * A bound as nginx writes a size (`1k`, `1m`, `64m`), for messages.
 *
 * @param bytes A whole number of KiB.
 * @returns The size with its unit.
 *
 * @example Usage
 * ```ts
 * import { MAX_CLIENT_BODY_BUFFER_SIZE, sizeText } from "./bounds.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(sizeText(MAX_CLIENT_BODY_BUFFER_SIZE), "64m");
 * strictEqual(sizeText(1024), "1k");
 * ```
 */
export function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0
    ? `${bytes / 1024 / 1024}m`
    : `${bytes / 1024}k`;
}
