/**
 * Single nginx values turned into the gateway's setting strings: times
 * (`ngx_parse_time`), sizes (`ngx_parse_offset`), `listen` and `proxy_pass`
 * addresses, and upstream `server` lines. Each returns the setting or an
 * error text; the caller adds `in FILE:LINE`.
 *
 * @module
 */

/** A value, or why it cannot be used. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

import { MAX_TIMER_MS } from "../config/mod.ts";

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });

/** NGX_MAX_INT_T_VALUE on 64-bit builds: past it nginx says "invalid value". */
const NGX_MAX_INT = 2n ** 63n - 1n;
const err = <T>(error: string): Parsed<T> => ({ ok: false, error });

const TIME_UNITS: Record<string, bigint> = {
  y: 365n * 86_400_000n,
  M: 30n * 86_400_000n,
  w: 7n * 86_400_000n,
  d: 86_400_000n,
  h: 3_600_000n,
  m: 60_000n,
  s: 1000n,
  ms: 1n,
};

/**
 * Parses an nginx time as `ngx_parse_time` does: parts such as `1m30s`,
 * bare seconds, units `ms s m h d w M y`. Counted exactly (BigInt), so a
 * value past nginx's 64-bit limit is refused, never rounded to a float.
 *
 * @param text The value.
 * @returns Milliseconds, or `null` when malformed or past nginx's limit;
 * a result past `Number.MAX_SAFE_INTEGER` is `Infinity`.
 *
 * @example Usage
 * ```ts
 * import { nginxTimeMs } from "./values.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(nginxTimeMs("1m30s"), 90_000);
 * strictEqual(nginxTimeMs("75"), 75_000);
 * ```
 */
export function nginxTimeMs(text: string): number | null {
  if (!/^(\d+(ms|[smhdwMy])?\s*)+$/.test(text)) return null;
  let total = 0n;
  const parts = [...text.matchAll(/(\d+)(ms|[smhdwMy])?/g)];
  // ngx_parse_time: a bare number is only valid alone or last.
  for (const [i, [, n, unit]] of parts.entries()) {
    if (unit === undefined && i !== parts.length - 1) return null;
    total += BigInt(n!) * TIME_UNITS[unit ?? "s"]!;
    if (total > NGX_MAX_INT) return null;
  }
  return total > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(total);
}

/**
 * A time directive's value as the gateway's setting (`NNNms`).
 *
 * @param name The directive, for the message.
 * @param text The value.
 * @returns The setting, or nginx's message.
 */
export function timeSetting(name: string, text: string): Parsed<string> {
  const ms = nginxTimeMs(text);
  if (ms === null) return err(`"${name}" directive invalid value`);
  if (ms === 0) {
    return err(
      `"${name} ${text}" is not supported: the gateway needs a time above 0`,
    );
  }
  if (ms > MAX_TIMER_MS) {
    return err(
      `"${name} ${text}" is not supported: the gateway takes a time up to ${MAX_TIMER_MS}ms`,
    );
  }
  return ok(`${ms}ms`);
}

/**
 * A size directive's value (`ngx_parse_offset`: bytes, `k`, `m`, `g`).
 *
 * @param name The directive, for the message.
 * @param text The value.
 * @returns The setting, or nginx's message.
 */
export function sizeSetting(name: string, text: string): Parsed<string> {
  if (!/^\d+[kKmMgG]?$/.test(text)) {
    return err(`"${name}" directive invalid value`);
  }
  const unit = { k: 1n << 10n, m: 1n << 20n, g: 1n << 30n }[
    text.slice(-1).toLowerCase() as "k" | "m" | "g"
  ] ?? 1n;
  const bytes = BigInt(text.replace(/\D$/, "")) * unit;
  // ngx_parse_offset refuses a size past off_t.
  if (bytes > NGX_MAX_INT) return err(`"${name}" directive invalid value`);
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) {
    return err(
      `"${name} ${text}" is not supported: the gateway takes a size up to ${Number.MAX_SAFE_INTEGER} bytes`,
    );
  }
  return ok(text.toLowerCase());
}

/**
 * A `listen` directive's address as the gateway's `listen` setting. nginx
 * listens on every interface for a bare port (`*:80`), so the setting says
 * so: the gateway's own bare port means loopback only.
 *
 * @param address The first argument.
 * @returns The setting, e.g. `*:80`, or the reason.
 *
 * @example Usage
 * ```ts
 * import { listenSetting } from "./values.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(listenSetting("80"), { ok: true, value: "*:80" });
 * ```
 */
export function listenSetting(address: string): Parsed<string> {
  if (address.startsWith("unix:")) {
    return err(
      `"listen ${address}" is not supported: the gateway listens on TCP only`,
    );
  }
  if (/^\d+$/.test(address)) return ok(`*:${address}`);
  if (/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.*-]+):\d+$/.test(address)) {
    return ok(address);
  }
  // `listen 127.0.0.1;` (no port) is port 80.
  if (/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.*-]+)$/.test(address)) {
    return ok(`${address}:80`);
  }
  return err(`invalid host in "${address}" of the "listen" directive`);
}

/** nginx 1.22's socket-tuning `listen` parameters (`ngx_http_core_listen()`). */
const LISTEN_TUNING = [
  "bind",
  "deferred",
  "reuseport",
  "setfib=",
  "fastopen=",
  "backlog=",
  "rcvbuf=",
  "sndbuf=",
  "accept_filter=",
  "ipv6only=",
  "so_keepalive=",
];

/**
 * `listen` parameters: accepted, warned about, refused, or not a parameter
 * at all: nginx's `invalid parameter "x"`, which is what a missing `;`
 * makes of the next line's words (`listen 80` then `server_name a;`).
 *
 * @param param One parameter after the address.
 * @returns The verdict.
 */
export function listenParameter(
  param: string,
): "ok" | "warn" | "emerg" | "invalid" {
  const key = param.split("=")[0]!;
  if (["default_server", "default", "ssl", "http2"].includes(param)) {
    return "ok";
  }
  if (["quic", "proxy_protocol", "spdy"].includes(key)) {
    return "emerg";
  }
  const known = LISTEN_TUNING.some((p) =>
    p.endsWith("=") ? param.startsWith(p) : param === p
  );
  return known ? "warn" : "invalid";
}

/** A `proxy_pass` target. */
export interface ProxyTarget {
  /** `host[:port]` as written (an upstream name or an address). */
  host: string;
  /** The URI part, `null` when there is none. */
  uri: string | null;
}

/**
 * Splits a `proxy_pass` URL into host and URI part.
 *
 * @param url The argument.
 * @returns The parts, or the reason it cannot be used.
 *
 * @example Usage
 * ```ts
 * import { proxyTarget } from "./values.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(proxyTarget("http://10.0.0.5:8080/"), {
 *   ok: true,
 *   value: { host: "10.0.0.5:8080", uri: "/" },
 * });
 * ```
 */
export function proxyTarget(url: string): Parsed<ProxyTarget> {
  if (url.includes("$")) {
    return err(
      `"proxy_pass ${url}" is not supported: the gateway does not evaluate variables`,
    );
  }
  const m = url.match(/^([a-z]+):\/\/([^/?#]+)(.*)$/i);
  if (!m) return err(`invalid URL prefix in "${url}"`);
  if (m[1]!.toLowerCase() !== "http") {
    return err(
      `"proxy_pass ${url}" is not supported: the gateway forwards over http:// only`,
    );
  }
  return ok({ host: m[2]!, uri: m[3] === "" ? null : m[3]! });
}

/**
 * An address from `proxy_pass` or a `server` line as the gateway's upstream
 * URL, with nginx's default port 80 written out (the gateway's own default
 * is 8080).
 *
 * @param host `host[:port]`.
 * @returns `http://host:port`.
 */
export function upstreamUrl(host: string): string {
  return /:\d+$/.test(host) && !/^\[[^\]]*\]$/.test(host)
    ? `http://${host}`
    : `http://${host}:80`;
}

/** One `server` line of an `upstream {}` block, as the gateway's setting. */
export interface UpstreamServerLine {
  /** The `upstream` setting entry. */
  setting: string;
  /** The `weight=` (1 when absent). */
  weight: number;
  /** Marked `backup`. */
  backup: boolean;
}

/**
 * Parses an `upstream {}` `server` line (ngx_http_upstream_server).
 *
 * @param args The arguments.
 * @returns The setting, or the reason.
 *
 * @example Usage
 * ```ts
 * import { upstreamServer } from "./values.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const s = upstreamServer(["10.0.0.6:8080", "backup", "fail_timeout=30s"]);
 * deepStrictEqual(s, {
 *   ok: true,
 *   value: { setting: "http://10.0.0.6:8080 backup fail_timeout=30000ms", weight: 1, backup: true },
 * });
 * ```
 */
export function upstreamServer(args: string[]): Parsed<UpstreamServerLine> {
  const [address = "", ...params] = args;
  if (address.startsWith("unix:")) {
    return err(
      `"server ${address}" is not supported: the gateway connects over TCP only`,
    );
  }
  const out = [upstreamUrl(address)];
  let weight = 1;
  let backup = false;
  for (const param of params) {
    const [key, value = ""] = param.split("=", 2) as [string, string?];
    // ngx_atoi refuses a number past NGX_MAX_INT_T_VALUE: "invalid parameter".
    if (key === "weight" && /^[1-9]\d{0,14}$/.test(value)) {
      weight = Number(value);
    } else if (key === "max_fails" && /^\d{1,15}$/.test(value)) out.push(param);
    else if (key === "fail_timeout") {
      const ms = nginxTimeMs(value);
      if (ms === null) return err(`invalid parameter "${param}"`);
      if (ms > MAX_TIMER_MS) {
        return err(
          `"server … ${param}" is not supported: the gateway takes a time up to ${MAX_TIMER_MS}ms`,
        );
      }
      out.push(`fail_timeout=${ms}ms`);
    } else if (param === "backup") {
      backup = true;
      out.push("backup");
    } else if (param === "down" || key === "max_conns") {
      return err(
        `"server … ${param}" is not supported: the gateway does not reproduce it`,
      );
    } else return err(`invalid parameter "${param}"`);
  }
  return ok({ setting: out.join(" "), weight, backup });
}
