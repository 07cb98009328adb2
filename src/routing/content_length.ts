/**
 * The one parser of the request's `Content-Length` for the whole gateway.
 *
 * `Deno.serve` already answers 400 to most malformed values (`+5`, `-1`,
 * `0x10`, `1e3`, an empty value, `5,6`, a length with `Transfer-Encoding`),
 * but it accepts two identical fields and joins them as `"5, 5"`, and it
 * accepts any value that fits 64 unsigned bits. nginx answers 400 to both
 * (`ngx_http_process_unique_header_line`, and `ngx_atoof` past `NGX_MAX_OFF_T_VALUE`),
 * and so must the gateway: `Number("5, 5")` is `NaN`, which skipped
 * `client_max_body_size` and framed the upstream request as
 * `Content-Length: NaN`.
 *
 * @module
 */

/** nginx's `NGX_MAX_OFF_T_VALUE` on 64-bit systems: 2^63 - 1. */
const MAX_OFF_T = 9223372036854775807n;

/** The verdict on a request's `Content-Length`. */
export type ContentLength =
  | {
    /** No `Content-Length` field. */
    kind: "none";
  }
  | {
    /** One valid length. */
    kind: "length";
    /**
     * The length; past 2^53 - 1 it is rounded (only the 413 check and
     * its message can meet such a value, and they use `digits`).
     */
    length: number;
    /** The length's decimal digits as sent, for nginx's 413 message. */
    digits: string;
  }
  | {
    /** Not one run of digits: nginx answers 400. */
    kind: "invalid";
    /** nginx's `[info]` message for it. */
    message: string;
  };

const NONE: ContentLength = { kind: "none" };
const DIGITS = /^[0-9]+$/;

/**
 * Parses a `Content-Length` value as `Deno.serve` hands it over (several
 * fields joined with `", "`).
 *
 * @param value The header value, or `null`.
 * @returns The length, none, or the 400 verdict with nginx's message.
 *
 * @example Usage
 * ```ts
 * import { parseContentLength } from "./content_length.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseContentLength("12"), { kind: "length", length: 12, digits: "12" });
 * deepStrictEqual(parseContentLength("5, 5").kind, "invalid");
 * ```
 */
export function parseContentLength(value: string | null): ContentLength {
  if (value === null) return NONE;
  if (DIGITS.test(value)) {
    // Up to 15 digits is exact as a double; longer values are checked
    // against off_t's range exactly.
    if (value.length > 15 && BigInt(value) > MAX_OFF_T) {
      return { kind: "invalid", message: INVALID };
    }
    return { kind: "length", length: Number(value), digits: value };
  }
  const parts = value.split(", ");
  if (parts.length > 1 && parts.every((p) => DIGITS.test(p))) {
    // Two fields: nginx names the second and the first, as sent.
    return {
      kind: "invalid",
      message: `client sent duplicate header line: "Content-Length: ${
        parts[1]
      }", previous value: "Content-Length: ${parts[0]}"`,
    };
  }
  return { kind: "invalid", message: INVALID };
}

const INVALID = 'client sent invalid "Content-Length" header';
