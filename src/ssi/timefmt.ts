/**
 * `$date_local` and `$date_gmt` (`ngx_http_ssi_date_gmt_local_variable`):
 * the time formatted by `config timefmt`, as C's `strftime` in the C locale
 * does; `%s` alone is the Unix time. nginx's default format is
 * `%A, %d-%b-%Y %H:%M:%S %Z`.
 *
 * @module
 */

/** nginx's `ngx_http_ssi_timefmt`. */
export const DEFAULT_TIMEFMT = "%A, %d-%b-%Y %H:%M:%S %Z";

/** `NGX_HTTP_SSI_DATE_LEN`: strftime's buffer; a longer result is none. */
const DATE_LEN = 2048;

const DAYS = [
  "Sunday",
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

const two = (n: number) => String(n).padStart(2, "0");

/** The broken-down time strftime reads. */
interface Tm {
  year: number;
  month: number;
  day: number;
  weekday: number;
  hour: number;
  minute: number;
  second: number;
  yearDay: number;
  /** Minutes east of UTC. */
  offset: number;
  zone: string;
}

function brokenDown(ms: number, gmt: boolean): Tm {
  const d = new Date(ms);
  const offset = gmt ? 0 : -d.getTimezoneOffset();
  const at = new Date(ms + offset * 60_000);
  const year = at.getUTCFullYear();
  const start = Date.UTC(year, 0, 1);
  return {
    year,
    month: at.getUTCMonth(),
    day: at.getUTCDate(),
    weekday: at.getUTCDay(),
    hour: at.getUTCHours(),
    minute: at.getUTCMinutes(),
    second: at.getUTCSeconds(),
    yearDay: Math.floor((at.getTime() - start) / 86_400_000),
    offset,
    zone: gmt ? "GMT" : zoneName(d, offset),
  };
}

/** The local zone's abbreviation (`UTC`, `CET`), else its offset. */
function zoneName(d: Date, offset: number): string {
  const part = new Intl.DateTimeFormat("en-US", { timeZoneName: "short" })
    .formatToParts(d).find((p) => p.type === "timeZoneName")?.value;
  if (part !== undefined && /^[A-Z]{2,5}$/.test(part)) return part;
  if (offset === 0) return "UTC";
  const sign = offset < 0 ? "-" : "+";
  return `${sign}${two(Math.floor(Math.abs(offset) / 60))}`;
}

/**
 * Formats a time as `strftime` does.
 *
 * @param format The format (`config timefmt`).
 * @param ms The time.
 * @param gmt `$date_gmt` (else local time).
 * @returns The text, or `null` where strftime returns 0 (an empty result,
 * or one past nginx's 2048 bytes): nginx then has no value.
 *
 * @example Usage
 * ```ts
 * import { formatDate } from "./timefmt.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const t = Date.UTC(2026, 10, 26, 4, 20, 38);
 * strictEqual(formatDate("%A, %d-%b-%Y %H:%M:%S %Z", t, true), "Thursday, 26-Nov-2026 04:20:38 GMT");
 * strictEqual(formatDate("%s", t, true), String(t / 1000));
 * ```
 */
export function formatDate(
  format: string,
  ms: number,
  gmt: boolean,
): string | null {
  if (format === "%s") return String(Math.floor(ms / 1000));
  const tm = brokenDown(ms, gmt);
  let out = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%" || i + 1 === format.length) {
      out += c;
      continue;
    }
    out += conversion(format[++i]!, tm, ms);
    if (out.length >= DATE_LEN) return null;
  }
  return out === "" || out.length >= DATE_LEN ? null : out;
}

function conversion(c: string, tm: Tm, ms: number): string {
  switch (c) {
    case "a":
      return DAYS[tm.weekday]!.slice(0, 3);
    case "A":
      return DAYS[tm.weekday]!;
    case "b":
    case "h":
      return MONTHS[tm.month]!.slice(0, 3);
    case "B":
      return MONTHS[tm.month]!;
    case "c":
      return `${DAYS[tm.weekday]!.slice(0, 3)} ${
        MONTHS[tm.month]!.slice(0, 3)
      } ${String(tm.day).padStart(2, " ")} ${two(tm.hour)}:${two(tm.minute)}:${
        two(tm.second)
      } ${tm.year}`;
    case "C":
      return two(Math.floor(tm.year / 100));
    case "d":
      return two(tm.day);
    case "D":
      return `${two(tm.month + 1)}/${two(tm.day)}/${two(tm.year % 100)}`;
    case "e":
      return String(tm.day).padStart(2, " ");
    case "F":
      return `${tm.year}-${two(tm.month + 1)}-${two(tm.day)}`;
    case "H":
      return two(tm.hour);
    case "I":
      return two(tm.hour % 12 === 0 ? 12 : tm.hour % 12);
    case "j":
      return String(tm.yearDay + 1).padStart(3, "0");
    case "k":
      return String(tm.hour).padStart(2, " ");
    case "l":
      return String(tm.hour % 12 === 0 ? 12 : tm.hour % 12).padStart(2, " ");
    case "m":
      return two(tm.month + 1);
    case "M":
      return two(tm.minute);
    case "n":
      return "\n";
    case "p":
      return tm.hour < 12 ? "AM" : "PM";
    case "P":
      return tm.hour < 12 ? "am" : "pm";
    case "r":
      return `${conversion("I", tm, ms)}:${two(tm.minute)}:${two(tm.second)} ${
        conversion("p", tm, ms)
      }`;
    case "R":
      return `${two(tm.hour)}:${two(tm.minute)}`;
    case "s":
      return String(Math.floor(ms / 1000));
    case "S":
      return two(tm.second);
    case "t":
      return "\t";
    case "T":
    case "X":
      return `${two(tm.hour)}:${two(tm.minute)}:${two(tm.second)}`;
    case "u":
      return String(tm.weekday === 0 ? 7 : tm.weekday);
    case "w":
      return String(tm.weekday);
    case "x":
      return `${two(tm.month + 1)}/${two(tm.day)}/${two(tm.year % 100)}`;
    case "y":
      return two(tm.year % 100);
    case "Y":
      return String(tm.year);
    case "z": {
      const sign = tm.offset < 0 ? "-" : "+";
      const abs = Math.abs(tm.offset);
      return `${sign}${two(Math.floor(abs / 60))}${two(abs % 60)}`;
    }
    case "Z":
      return tm.zone;
    case "%":
      return "%";
    default:
      // glibc writes an unknown conversion as it is.
      return `%${c}`;
  }
}
