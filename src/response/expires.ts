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
    cacheControl: negative || maxAge < 0 ? "no-cache" : `max-age=${maxAge}`,
  };
}

/** An HTTP date (RFC 9110 §5.6.7) for seconds since the epoch. */
function httpDate(seconds: number): string {
  return new Date(seconds * 1000).toUTCString();
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
