/**
 * `expires` as `ngx_http_set_expires` computes it: the `Expires` date and
 * the `Cache-Control` value for a response, from the compiled setting, the
 * clock and the response's `Last-Modified`. Pure, so every branch is a row
 * of a table test.
 *
 * @module
 */

import type { Expires } from "../engine/mod.ts";

/** The two fields `expires` sets. */
export interface ExpiresFields {
  /** The `Expires` value, an HTTP date. */
  expires: string;
  /** The `Cache-Control` value. */
  cacheControl: string;
}

/** The clock and the response, in seconds as nginx counts them. */
export interface ExpiresInput {
  /** Now, in ms since the epoch (nginx uses whole seconds: `ngx_time()`). */
  now: number;
  /** The response's `Last-Modified` in ms, or `null` when it has none. */
  lastModified: number | null;
}

/** nginx's fixed text for `expires epoch`. */
const EPOCH = "Thu, 01 Jan 1970 00:00:01 GMT";
/** nginx's fixed text for `expires max`. */
const MAX = "Thu, 31 Dec 2037 23:55:55 GMT";

/**
 * The fields `expires` sets, or `null` for `expires off`.
 *
 * As `ngx_http_set_expires`: `epoch` and `max` are fixed texts; a zero time
 * is now and `max-age=0`; `@time` is the next such local time of day; `modified`
 * counts from `Last-Modified` (from now when the response has none); a
 * negative setting or a date already past is `no-cache`.
 *
 * @param setting The compiled `expires`.
 * @param input The clock and the response's `Last-Modified`.
 * @returns The fields, or `null`.
 *
 * @example Usage
 * ```ts
 * import { expiresFields } from "./expires.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const now = Date.UTC(2026, 10, 25, 12, 0, 0);
 * deepStrictEqual(
 *   expiresFields({ kind: "after", seconds: 3600, modified: false }, { now, lastModified: null }),
 *   { expires: "Wed, 25 Nov 2026 13:00:00 GMT", cacheControl: "max-age=3600" },
 * );
 * ```
 */
export function expiresFields(
  setting: Expires,
  input: ExpiresInput,
): ExpiresFields | null {
  switch (setting.kind) {
    case "off":
      return null;
    case "epoch":
      return { expires: EPOCH, cacheControl: "no-cache" };
    case "max":
      return { expires: MAX, cacheControl: "max-age=315360000" };
    case "variable":
      // Read for the response first (the headers filter's expiresOfValue).
      return null;
  }
  const now = Math.floor(input.now / 1000);
  let at: number;
  let maxAge: number;
  if (setting.kind === "daily") {
    at = nextTimeOfDay(now, setting.secondsOfDay);
    maxAge = at - now;
  } else if (setting.seconds === 0) {
    return { expires: httpDate(now), cacheControl: "max-age=0" };
  } else if (!setting.modified || input.lastModified === null) {
    maxAge = setting.seconds;
    at = now + setting.seconds;
  } else {
    at = Math.floor(input.lastModified / 1000) + setting.seconds;
    maxAge = at - now;
  }
  const negative = setting.kind === "after" && setting.seconds < 0;
  return {
    expires: httpDate(at),
    // As an integer even past 2^53 (no exponent, no rounding to zeros).
    cacheControl: negative || maxAge < 0
      ? "no-cache"
      : `max-age=${BigInt(Math.trunc(maxAge))}`,
  };
}

/** The last second an HTTP date's four-digit year can hold. */
const LAST_HTTP_DATE = Date.UTC(9999, 11, 31, 23, 59, 59) / 1000;

/**
 * An HTTP date (RFC 9110 §5.6.7) for seconds since the epoch; a time past
 * year 9999 (`expires 9223372036854775807`) is held at its end rather than
 * become `Invalid Date`.
 */
function httpDate(seconds: number): string {
  return new Date(Math.min(seconds, LAST_HTTP_DATE) * 1000).toUTCString();
}

/**
 * `ngx_next_time`: the next moment, after `now`, whose local time of day is
 * `secondsOfDay`; tomorrow's when today's has passed (or is now).
 */
function nextTimeOfDay(now: number, secondsOfDay: number): number {
  const day = new Date(now * 1000);
  const h = Math.floor(secondsOfDay / 3600);
  const m = Math.floor((secondsOfDay % 3600) / 60);
  day.setHours(h, m, secondsOfDay % 60, 0);
  if (day.getTime() / 1000 - now > 0) return day.getTime() / 1000;
  // mktime() normalises the 32nd of a month, as Date does.
  day.setDate(day.getDate() + 1);
  day.setHours(h, m, secondsOfDay % 60, 0);
  return day.getTime() / 1000;
}

/** NGX_MAX_INT_T_VALUE on 64-bit builds. */
const NGX_MAX_INT_T = 2n ** 63n - 1n;

/** Seconds per unit of `ngx_parse_time`, in the order units must come. */
const UNITS: readonly [string, bigint][] = [
  ["y", 365n * 86400n],
  ["M", 30n * 86400n],
  ["w", 7n * 86400n],
  ["d", 86400n],
  ["h", 3600n],
  ["m", 60n],
  ["s", 1n],
];

/**
 * `ngx_parse_time(value, 1)`: a time in seconds (`1h 30m`, `7d`, `90`),
 * units from largest to smallest, each once, no `ms`; `null` when nginx
 * says "invalid value".
 */
function parseSeconds(text: string): number | null {
  let total = 0n;
  let value = 0n;
  let valid = false;
  let step = -1; // index into UNITS of the last unit read
  let i = 0;
  while (i < text.length) {
    const c = text[i++]!;
    if (c >= "0" && c <= "9") {
      value = value * 10n + BigInt(c.charCodeAt(0) - 48);
      if (value > NGX_MAX_INT_T) return null;
      valid = true;
      continue;
    }
    let unit = UNITS.findIndex(([u]) => u === c);
    if (c === "m" && text[i] === "s") return null; // ms: not for seconds
    if (c === " ") unit = UNITS.length; // a bare number, then more
    if (unit < 0 || unit <= step) return null;
    step = unit;
    const scale = unit === UNITS.length ? 1n : UNITS[unit]![1];
    if (value > NGX_MAX_INT_T / scale) return null;
    total += value * scale;
    if (total > NGX_MAX_INT_T) return null;
    value = 0n;
    while (text[i] === " ") i++;
  }
  if (!valid) return null;
  total += value;
  if (total > NGX_MAX_INT_T) return null;
  return Number(total);
}

/**
 * Compiles `expires`' arguments as `ngx_http_headers_expires` reads them:
 * `off`, `epoch`, `max`, a time (`1h`, `-1`, `+7d`, `"1h 30m"`), `modified`
 * and a time, `@` and a time of day (`@15h30m`). Values with variables are
 * refused (the model has no per-request `expires`).
 *
 * @param args The directive's arguments (one or two).
 * @returns The setting, or nginx's message for `"expires" directive …`
 * (`invalid value`, `daily time value must be less than 24 hours`, …).
 *
 * @example Usage
 * ```ts
 * import { parseExpires } from "./expires.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseExpires(["7d"]), { kind: "after", seconds: 604800, modified: false });
 * deepStrictEqual(parseExpires(["modified", "+1h"]), { kind: "after", seconds: 3600, modified: true });
 * deepStrictEqual(parseExpires(["@3h"]), { kind: "daily", secondsOfDay: 10800 });
 * deepStrictEqual(parseExpires(["soon"]), { error: "invalid value" });
 * ```
 */
export function parseExpires(
  args: readonly string[],
): Expires | { error: string } {
  const invalid = { error: "invalid value" };
  if (args.length < 1 || args.length > 2) return invalid;
  const modified = args.length === 2;
  if (modified && args[0] !== "modified") return invalid;
  const text = args[args.length - 1]!;
  if (text.includes("$")) {
    return { error: "with variables is not supported" };
  }
  // ngx_http_parse_expires: the words only without "modified".
  if (!modified) {
    if (text === "epoch") return { kind: "epoch" };
    if (text === "max") return { kind: "max" };
    if (text === "off") return { kind: "off" };
  }
  if (text[0] === "@") {
    if (modified) {
      return { error: 'daily time cannot be used with "modified" parameter' };
    }
    // No sign after "@": ngx_parse_time refuses it.
    const secondsOfDay = parseSeconds(text.slice(1));
    if (secondsOfDay === null) return invalid;
    if (secondsOfDay > 24 * 60 * 60) {
      return { error: "daily time value must be less than 24 hours" };
    }
    return { kind: "daily", secondsOfDay };
  }
  const sign = text[0];
  const seconds = parseSeconds(
    sign === "+" || sign === "-" ? text.slice(1) : text,
  );
  if (seconds === null) return invalid;
  return {
    kind: "after",
    seconds: sign === "-" ? 0 - seconds : seconds,
    modified,
  };
}
