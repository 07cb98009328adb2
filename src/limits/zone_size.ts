/**
 * Zone sizes (`zone=name:10m`) as nginx reads them (`ngx_parse_size`), and
 * how many states a zone of that size holds: nginx keeps them in a slab
 * allocator in shared memory, each state rounded up to a power of two; the
 * gateway keeps them in a `Map` but counts the bytes nginx would, so a zone
 * fills and evicts when nginx's would.
 *
 * @module
 */

/** nginx's page size on the platforms it runs on here. */
export const PAGE_SIZE = 4096;

/**
 * A size as `ngx_parse_size` reads it: digits, then `k`/`K` or `m`/`M`.
 *
 * @param text The size.
 * @returns Bytes, or `null` when nginx would refuse it.
 *
 * @example Usage
 * ```ts
 * import { parseSize } from "./zone_size.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseSize("10m"), 10 * 1024 * 1024);
 * strictEqual(parseSize("1x"), null);
 * ```
 */
export function parseSize(text: string): number | null {
  // No `g`: ngx_parse_size knows k and m only.
  const m = /^([0-9]+)([kKmM]?)$/.exec(text);
  if (m === null) return null;
  const scale = { "": 1, k: 1024, m: 1024 * 1024 }[
    m[2]!.toLowerCase() as "" | "k" | "m"
  ];
  const value = Number(m[1]) * scale;
  return Number.isSafeInteger(value) ? value : null;
}

/**
 * The bytes a zone has for states: nginx's slab pool takes its own header
 * and a page descriptor per page from the zone, and the zone's first page
 * holds the tree and the log text (`ngx_slab_init`).
 *
 * @param size The zone's size.
 * @returns Bytes available to states.
 */
export function usableBytes(size: number): number {
  const pages = Math.floor((size - 256) / (PAGE_SIZE + 24));
  return Math.max(0, (pages - 1) * PAGE_SIZE);
}

/**
 * The slab slot a state takes: its size rounded up to a power of two, at
 * least 8 bytes (`ngx_slab_alloc_locked`).
 *
 * @param bytes The state's size.
 * @returns The slot's size.
 */
export function slotBytes(bytes: number): number {
  let slot = 8;
  while (slot < bytes) slot *= 2;
  return slot;
}

/**
 * The largest zone: nginx allocates a zone's memory once, the gateway's
 * states grow as clients come, up to what nginx's zone would hold, each
 * taking a few times nginx's bytes in a `Map`. 64m (about a million
 * states) keeps a zone well inside the memory the gateway is watched for.
 */
export const MAX_ZONE_SIZE = 64 * 1024 * 1024;

/** What a zone parameter gave. */
export type ZoneParam =
  | { ok: true; name: string; size: number }
  | { ok: false; error: string };

/**
 * Reads `zone=name:size` as `ngx_http_limit_req_zone` and
 * `ngx_http_limit_conn_zone` do.
 *
 * @param param The parameter, `zone=` included.
 * @returns The name and size, or nginx's message.
 */
export function parseZoneParam(param: string): ZoneParam {
  const value = param.slice(5);
  const colon = value.indexOf(":");
  if (colon < 0) return { ok: false, error: `invalid zone size "${param}"` };
  const size = parseSize(value.slice(colon + 1));
  if (size === null) {
    return { ok: false, error: `invalid zone size "${param}"` };
  }
  if (size < 8 * PAGE_SIZE) {
    return { ok: false, error: `zone "${param}" is too small` };
  }
  if (size > MAX_ZONE_SIZE) {
    return {
      ok: false,
      error: `"${param}" is not supported: the gateway takes a zone up to ${
        MAX_ZONE_SIZE / 1024 / 1024
      }m (clients fill it, memory is bounded)`,
    };
  }
  return { ok: true, name: value.slice(0, colon), size };
}
