/**
 * Which failures and answers move a request to the next server of its
 * group, as nginx 1.22's `ngx_http_upstream_next` and
 * `ngx_http_upstream_test_next` decide under `proxy_next_upstream` (and
 * `fastcgi_next_upstream`): the directive's words as a bit set made once
 * per location at config load ({@linkcode NextUpstream}), read per failure.
 *
 * @module
 */

import type { UpstreamError } from "./error.ts";

/** `error`: a connection, send or read failure (`NGX_HTTP_UPSTREAM_FT_ERROR`). */
export const NEXT_ERROR = 0x2;
/** `timeout`: a timer expired (`NGX_HTTP_UPSTREAM_FT_TIMEOUT`). */
export const NEXT_TIMEOUT = 0x4;
/** `invalid_header`: an answer whose head cannot be read. */
export const NEXT_INVALID_HEADER = 0x8;
/** `non_idempotent`: a POST, LOCK or PATCH already sent may be sent again. */
export const NEXT_NON_IDEMPOTENT = 0x4000;
/** `off`: no next server, whatever else is named. */
export const NEXT_OFF = 0x8000;

/** The `http_*` words' statuses and bits, in nginx's order (`ngx_http_upstream_next_errors`). */
const STATUS_BITS: ReadonlyMap<number, number> = new Map([
  [500, 0x10],
  [502, 0x20],
  [503, 0x40],
  [504, 0x80],
  [403, 0x100],
  [404, 0x200],
  [429, 0x400],
]);

/** Every `http_*` bit: a location without one never reads an answer's status. */
export const NEXT_ANY_STATUS = 0x7f0;

/** A dropped 403 or 404 frees the server as `NGX_PEER_NEXT`: no failure. */
const NOT_A_FAILURE = 0x100 | 0x200;

/**
 * The words of `proxy_next_upstream` (`ngx_http_proxy_next_upstream_masks`);
 * `updating` concerns a cache the gateway does not keep.
 */
const PROXY_WORDS: ReadonlyMap<string, number> = new Map([
  ["error", NEXT_ERROR],
  ["timeout", NEXT_TIMEOUT],
  ["invalid_header", NEXT_INVALID_HEADER],
  ["non_idempotent", NEXT_NON_IDEMPOTENT],
  ["http_500", 0x10],
  ["http_502", 0x20],
  ["http_503", 0x40],
  ["http_504", 0x80],
  ["http_403", 0x100],
  ["http_404", 0x200],
  ["http_429", 0x400],
  ["updating", 0x800],
  ["off", NEXT_OFF],
]);

/** `fastcgi_next_upstream` has no `http_502` or `http_504` (`ngx_http_fastcgi_next_upstream_masks`). */
const FASTCGI_WORDS: ReadonlyMap<string, number> = new Map(
  [...PROXY_WORDS].filter(([word]) =>
    word !== "http_502" && word !== "http_504"
  ),
);

/** A location's `*_next_upstream`, `*_next_upstream_tries` and `*_next_upstream_timeout`. */
export interface NextUpstream {
  /** The words as bits (`NEXT_*`); `off` alone when `off` is among them. */
  readonly mask: number;
  /** `*_next_upstream_tries`: the most servers one request tries; 0 = no bound. */
  readonly tries: number;
  /** `*_next_upstream_timeout` in ms: no next server once this long passed; 0 = none. */
  readonly timeoutMs: number;
}

/** nginx's default, `error timeout`, no bound on tries or time: shared. */
export const DEFAULT_NEXT_UPSTREAM: NextUpstream = Object.freeze({
  mask: NEXT_ERROR | NEXT_TIMEOUT,
  tries: 0,
  timeoutMs: 0,
});

/** One directive's words read as `ngx_conf_set_bitmask_slot` reads them. */
export interface NextUpstreamWords {
  /** The bits named, `off` kept as it is (see {@linkcode nextUpstreamMask}). */
  mask: number;
  /** The first word that is none of the module's (nginx's `invalid value "x"`), or `null`. */
  invalid: string | null;
  /** Words named twice (nginx's `duplicate value "x"` warnings), in order. */
  duplicates: string[];
}

/**
 * Reads a `proxy_next_upstream` or `fastcgi_next_upstream` directive's
 * words, case-insensitively, into bits added to `mask` (nginx ORs every
 * such directive of one level into one value).
 *
 * @param words The directive's arguments.
 * @param options The module, and the bits this level's earlier directives set.
 * @returns The bits, the first invalid word and the repeated ones.
 *
 * @example Usage
 * ```ts
 * import { readNextUpstream } from "./try_next.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(readNextUpstream(["error", "x"], { module: "proxy" }).invalid, "x");
 * deepStrictEqual(readNextUpstream(["http_502"], { module: "fastcgi" }).invalid, "http_502");
 * ```
 */
export function readNextUpstream(
  words: readonly string[],
  options: { module: "proxy" | "fastcgi"; mask?: number },
): NextUpstreamWords {
  const table = options.module === "proxy" ? PROXY_WORDS : FASTCGI_WORDS;
  let mask = options.mask ?? 0;
  const duplicates: string[] = [];
  for (const word of words) {
    const bit = table.get(word.toLowerCase());
    if (bit === undefined) return { mask, invalid: word, duplicates };
    if ((mask & bit) !== 0) duplicates.push(word);
    mask |= bit;
  }
  return { mask, invalid: null, duplicates };
}

/**
 * A level's bits as nginx merges them (`ngx_http_proxy_merge_loc_conf`):
 * `off` among them leaves `off` alone.
 *
 * @param mask The bits read.
 * @returns The bits the walk reads.
 */
export function nextUpstreamMask(mask: number): number {
  return (mask & NEXT_OFF) !== 0 ? NEXT_OFF : mask;
}

/**
 * Whether a failure sends the request to the next server, as
 * `ngx_http_upstream_next` decides: the failure's class (`error`, `timeout`
 * or `invalid_header`) must be named, and `non_idempotent` too once a
 * POST, LOCK or PATCH was sent (nginx ≥ 1.9.13). A client that left never
 * moves on; the caller asks only before the client was answered.
 *
 * @param error The failure.
 * @param method The request method.
 * @param mask The location's bits ({@linkcode NextUpstream.mask}).
 * @returns Whether to try the next server.
 *
 * @example Usage
 * ```ts
 * import { DEFAULT_NEXT_UPSTREAM, NEXT_ERROR, shouldTryNext } from "./try_next.ts";
 * import { upstreamErrorFromOs, upstreamTimeout } from "./error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const refused = upstreamErrorFromOs(new Error("(os error 111)"), "connecting to upstream", "linux");
 * const timedOut = upstreamTimeout("reading response header from upstream", "linux");
 * strictEqual(shouldTryNext(refused, "POST", DEFAULT_NEXT_UPSTREAM.mask), true);
 * strictEqual(shouldTryNext(timedOut, "GET", DEFAULT_NEXT_UPSTREAM.mask), true);
 * strictEqual(shouldTryNext(timedOut, "POST", DEFAULT_NEXT_UPSTREAM.mask), false);
 * strictEqual(shouldTryNext(timedOut, "GET", NEXT_ERROR), false);
 * ```
 */
export function shouldTryNext(
  error: UpstreamError,
  method: string,
  mask: number,
): boolean {
  if (error.kind === "client-closed") return false;
  let ft = error.kind === "timed-out"
    ? NEXT_TIMEOUT
    : error.kind === "invalid-response"
    ? NEXT_INVALID_HEADER
    : NEXT_ERROR;
  if (
    error.action !== "connecting to upstream" && nonIdempotent(method)
  ) {
    ft |= NEXT_NON_IDEMPOTENT;
  }
  return (mask & ft) === ft;
}

/**
 * The bit an answer's status stands for when the location names it
 * (`ngx_http_upstream_test_next`), with `non_idempotent` required for a
 * POST, LOCK or PATCH; 0 when the answer is relayed.
 *
 * @param status The answer's status.
 * @param method The request method.
 * @param mask The location's bits.
 * @returns The status's bit, or 0.
 */
export function dropsAnswer(
  status: number,
  method: string,
  mask: number,
): number {
  const bit = STATUS_BITS.get(status);
  if (bit === undefined) return 0;
  const needed = nonIdempotent(method) ? bit | NEXT_NON_IDEMPOTENT : bit;
  return (mask & needed) === needed ? bit : 0;
}

/**
 * Whether a dropped answer counts against the server's `max_fails`:
 * `http_403` and `http_404` free it as `NGX_PEER_NEXT`, the others as
 * `NGX_PEER_FAILED` (`ngx_http_upstream_next`).
 *
 * @param bit The bit {@linkcode dropsAnswer} returned.
 * @returns Whether it is the server's failure.
 */
export function droppedIsFailure(bit: number): boolean {
  return (bit & NOT_A_FAILURE) === 0;
}

function nonIdempotent(method: string): boolean {
  return method === "POST" || method === "LOCK" || method === "PATCH";
}
