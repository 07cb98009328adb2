/**
 * English month abbreviations, as nginx writes them in `$time_local` and
 * autoindex listings (its own table, `ngx_times.c`'s `months`, never the
 * locale's).
 *
 * @module
 */

/** `Jan` … `Dec`, indexed by `Date#getMonth()`. */
export const MONTH_NAMES = [
  "Jan",
  "Feb",
  "Mar",
  "Apr",
  "May",
  "Jun",
  "Jul",
  "Aug",
  "Sep",
  "Oct",
  "Nov",
  "Dec",
] as const;
