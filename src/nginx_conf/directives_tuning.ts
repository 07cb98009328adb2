/**
 * Directives nginx 1.22 accepts that size its hashes or tune what the
 * gateway has no counterpart for, and those whose behaviour the gateway
 * does not reproduce, with what to do instead. Places and counts are
 * nginx 1.22's `ngx_command_t` tables (the http core, map, proxy, log,
 * upstream, upstream keepalive and zone, limit rate, range, referer,
 * split_clients, auth_request, mirror and headers modules); the values of
 * the accepted ones are checked as their slot functions check them
 * ({@linkcode tuningProblem}), so `--check` refuses what `nginx -t`
 * refuses.
 *
 * @module
 */

import { nginxTimeMs } from "./values.ts";

const TUNING = "it only tunes how nginx does its work";
const RESOLVER =
  "the gateway resolves no names per request: a proxy_pass with variables in its host reaches upstream{} names and addresses only";
const RATE =
  'the gateway does not limit a response\'s rate; remove it ("limit_req" and "limit_conn" bound requests and connections)';

/**
 * The entries, in the form of the directive table
 * (`name contexts args disposition`, then the reason or default).
 */
export const TUNING_TABLE: readonly (readonly [string, string?])[] = [
  ["map_hash_bucket_size H 1-1 warn", TUNING],
  ["map_hash_max_size H 1-1 warn", TUNING],
  ["variables_hash_bucket_size H 1-1 warn", TUNING],
  ["variables_hash_max_size H 1-1 warn", TUNING],
  ["proxy_headers_hash_bucket_size HSL 1-1 warn", TUNING],
  ["proxy_headers_hash_max_size HSL 1-1 warn", TUNING],
  ["open_log_file_cache HSL 1-4 warn", TUNING],
  ["resolver_timeout HSL 1-1 warn", RESOLVER],
  ["send_lowat HSL 1-1 warn", TUNING],
  [
    "keepalive_disable HSL 1-2 warn",
    'the runtime keeps every browser\'s connection alive, as "keepalive_disable none"',
  ],
  ["proxy_socket_keepalive HSL flag warn", TUNING],
  [
    "msie_padding HSL flag warn",
    'the gateway pads no error page for MSIE, as "msie_padding off"',
  ],
  ["msie_refresh HSL flag default", "off"],
  ["log_subrequest HSL flag default", "off"],
  ["proxy_ignore_client_abort HSL flag default", "off"],
  ["max_ranges HSL 1-1 map"],
  ["limit_rate HSLI 1-1 emerg", RATE],
  ["limit_rate_after HSLI 1-1 emerg", RATE],
  [
    "keepalive_time HSL 1-1 emerg",
    'the runtime keeps a client connection open until the client closes it; remove it ("keepalive_requests" is ignored too)',
  ],
  // The upstream one after: the first entry of a name is the README's.
  ["keepalive_time U 1-1 warn", TUNING],
  ["zone U 1-2 warn", "the gateway's upstream state is one process's already"],
  ["split_clients H {2-2} map"],
  ["valid_referers SL 1-n map"],
  [
    "disable_symlinks HSL 1-2 emerg",
    "the gateway serves a link only when its target stays inside the folder the location serves; remove it",
  ],
  [
    "auth_delay HSL 1-1 emerg",
    'the gateway answers a failed password check at once; remove it ("limit_req" slows repeated tries)',
  ],
  [
    "add_trailer HSLI 2-3 emerg",
    'the gateway sends no trailers; use "add_header"',
  ],
  [
    "mirror HSL 1-1 emerg",
    "the gateway sends no mirror subrequests; remove it",
  ],
  ["mirror_request_body HSL flag warn", "it matters only with mirror"],
];

/** `ngx_conf_set_num_slot` directives (`invalid number`). */
const NUMBERS = new Set([
  "map_hash_bucket_size",
  "map_hash_max_size",
  "variables_hash_bucket_size",
  "variables_hash_max_size",
  "proxy_headers_hash_bucket_size",
  "proxy_headers_hash_max_size",
  "server_names_hash_bucket_size",
  "server_names_hash_max_size",
  "types_hash_bucket_size",
  "types_hash_max_size",
]);

/** `ngx_conf_set_msec_slot` directives (`invalid value`). */
const TIMES = new Set(["resolver_timeout", "keepalive_time"]);

/** The largest `ngx_atoi` takes (NGX_MAX_INT_T_VALUE on 64-bit builds). */
const MAX_INT = 2n ** 63n - 1n;

/** `ngx_atoi`: digits only, within `ngx_int_t`. */
function atoi(text: string): bigint | null {
  if (!/^\d+$/.test(text)) return null;
  const n = BigInt(text);
  return n > MAX_INT ? null : n;
}

/** `ngx_parse_time(value, 1)`: seconds, no `ms`. */
function seconds(text: string): boolean {
  return !/ms/.test(text) && nginxTimeMs(text) !== null;
}

/**
 * `ngx_parse_size`: a number and `k`, `m` or `g`.
 *
 * @param text The value as written.
 * @returns Its bytes, or `null` when nginx refuses it.
 */
export function parseSize(text: string): number | null {
  const m = /^(\d+)([kKmMgG]?)$/.exec(text);
  if (m === null) return null;
  const scale = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[
    m[2]!.toLowerCase() as "" | "k" | "m" | "g"
  ];
  return Number(m[1]) * scale;
}

/**
 * What nginx refuses in the value of one of these directives, as its slot
 * function says it (`"NAME" directive invalid number`, `invalid value
 * "x"`, …).
 *
 * @param d The directive (its name and arguments), its count and place
 * already checked; the shape is written here so the directive table and
 * the parser need not import each other.
 * @returns The message, or `null` when nginx takes the value.
 *
 * @example Usage
 * ```ts
 * import { tuningProblem } from "./directives_tuning.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const d = { name: "map_hash_bucket_size", args: ["64k"], file: "f", line: 1 };
 * strictEqual(tuningProblem(d), '"map_hash_bucket_size" directive invalid number');
 * ```
 */
export function tuningProblem(
  d: { readonly name: string; readonly args: readonly string[] },
): string | null {
  const [first = ""] = d.args;
  if (NUMBERS.has(d.name) || d.name === "max_ranges") {
    return atoi(first) === null ? `"${d.name}" directive invalid number` : null;
  }
  if (TIMES.has(d.name)) {
    return nginxTimeMs(first) === null
      ? `"${d.name}" directive invalid value`
      : null;
  }
  switch (d.name) {
    case "send_lowat":
      return parseSize(first) === null
        ? `"${d.name}" directive invalid value`
        : null;
    case "keepalive_disable": {
      // ngx_conf_set_bitmask_slot
      const bad = d.args.find((a) => !/^(none|msie6|safari)$/i.test(a));
      return bad === undefined ? null : `invalid value "${bad}"`;
    }
    case "open_log_file_cache":
      return openLogFileCacheProblem(d.args);
    case "zone": {
      // ngx_http_upstream_zone
      if (d.args.length < 2) return null;
      const size = parseSize(d.args[1]!);
      if (size === null) return `invalid zone size "${d.args[1]}"`;
      return size < 8 * 4096 ? `zone "${first}" is too small` : null;
    }
  }
  return null;
}

/** `ngx_http_log_open_file_cache`. */
function openLogFileCacheProblem(args: readonly string[]): string | null {
  let max = 0n;
  let off = false;
  for (const arg of args) {
    const ok = arg.startsWith("max=")
      ? (max = atoi(arg.slice(4)) ?? -1n) >= 0n
      : arg.startsWith("inactive=") || arg.startsWith("valid=")
      ? seconds(arg.slice(arg.indexOf("=") + 1))
      : arg.startsWith("min_uses=")
      ? atoi(arg.slice(9)) !== null
      : arg === "off" && (off = true);
    if (!ok) return `invalid "open_log_file_cache" parameter "${arg}"`;
  }
  return !off && max === 0n
    ? `"open_log_file_cache" must have "max" parameter`
    : null;
}
