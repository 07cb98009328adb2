/**
 * HTTP dates as `ngx_parse_http_time` reads them: RFC 1123
 * (`Tue, 10 Nov 2002 23:50:13 GMT`), RFC 850 (`Tuesday, 10-Nov-02
 * 23:50:13 GMT`) and asctime (`Tue Nov 10 23:50:13 2002`). Anything else
 * (`0`, `-1`, a bare year) is no date, where `Date.parse` would guess one.
 *
 * @module
 */

const MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";

const RFC1123 = /^[^ ,]*, *(\d\d) ([A-Z][a-z]{2}) (\d{4}) (\d\d):(\d\d):(\d\d)/;
const RFC850 = /^[^ ,]*, *(\d\d)-([A-Z][a-z]{2})-(\d\d) (\d\d):(\d\d):(\d\d)/;
const ASCTIME =
  /^[^ ,]* +([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})/;

/**
 * The time an HTTP date names, in ms, or `null` when it is not one.
 *
 * @param value The field's value.
 * @returns Milliseconds since the epoch (whole seconds), or `null`.
 *
 * @example Usage
 * ```ts
 * import { httpTimeMs } from "./http_time.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(httpTimeMs("Thu, 01 Jan 1970 00:00:01 GMT"), 1000);
 * strictEqual(httpTimeMs("Thursday, 01-Jan-70 00:00:01 GMT"), 1000);
 * strictEqual(httpTimeMs("Thu Jan  1 00:00:01 1970"), 1000);
 * strictEqual(httpTimeMs("0"), null);
 * ```
 */
export function httpTimeMs(value: string): number | null {
  let m = RFC1123.exec(value);
  if (m !== null) return utc(m[3]!, m[2]!, m[1]!, [m[4]!, m[5]!, m[6]!]);
  m = RFC850.exec(value);
  if (m !== null) {
    const yy = Number(m[3]);
    const year = String(yy < 70 ? 2000 + yy : 1900 + yy);
    return utc(year, m[2]!, m[1]!, [m[4]!, m[5]!, m[6]!]);
  }
  m = ASCTIME.exec(value);
  if (m !== null) return utc(m[6]!, m[1]!, m[2]!, [m[3]!, m[4]!, m[5]!]);
  return null;
}

function utc(
  yearText: string,
  monthText: string,
  dayText: string,
  [h, mi, s]: string[],
): number | null {
  const month = MONTHS.indexOf(monthText);
  if (month < 0 || month % 3 !== 0) return null;
  const year = Number(yearText);
  const day = Number(dayText);
  const hour = Number(h);
  const min = Number(mi);
  const sec = Number(s);
  if (hour > 23 || min > 59 || sec > 59 || year < 1970 || day < 1) return null;
  const ms = Date.UTC(year, month / 3, day, hour, min, sec);
  // A day past the month's end (31 Apr) is no date, as in nginx.
  if (new Date(ms).getUTCDate() !== day) return null;
  return ms;
}
