/**
 * The one walk over a request's header fields: the flat list the head's
 * checks and the proxy read, and the fields every request needs, each read
 * by its first line where a name came on several
 * (`ngx_http_process_header_line`).
 *
 * @module
 */

import { hasRepeatedLines, keepFirstLines } from "../runtime/mod.ts";

/**
 * A request's fields as one walk over them read them: the flat list, and
 * the fields the handler reads of every request (and a file's answer, of
 * most).
 */
export interface FieldsRead {
  /**
   * Every field in `Headers.forEach`'s order (sorted by name, repeated ones
   * joined with `, ` as `Headers.get` joins them), flat: name, value…
   */
  readonly fields: string[];
  /** `Host`, or `null`. */
  host: string | null;
  /** `Referer` (its first line), or `null`. */
  referrer: string | null;
  /** `Content-Length`, or `null`. */
  contentLength: string | null;
  /** `Transfer-Encoding`, or `null`. */
  transferEncoding: string | null;
  /** `Expect`, or `null` (a proxied body's `100 Continue`). */
  expect: string | null;
  /** `If-None-Match`, or `null` (a file's answer). */
  ifNoneMatch: string | null;
  /** `If-Modified-Since`, or `null`. */
  ifModifiedSince: string | null;
  /** `If-Match`, or `null`. */
  ifMatch: string | null;
  /** `If-Unmodified-Since`, or `null`. */
  ifUnmodifiedSince: string | null;
  /** `Range` (its first line), or `null`. */
  range: string | null;
  /** `If-Range`, or `null`. */
  ifRange: string | null;
  /**
   * Some field came on more than one line (the lines as received outnumber
   * the fields walked): {@linkcode duplicateFieldLine} reads the lines.
   * A joined value cannot show it: `Headers` leaves no `", "` after an
   * empty line and trims a line of blanks to nothing.
   */
  repeated: boolean;
}

/**
 * Reads a request's fields in one walk: the flat list the head's checks
 * and the proxy read, and the fields every request needs, picked on the
 * way. Each `get` of a field before the walk was a call into Deno, and one
 * after it a scan of the list; the walk itself is needed anyway (nginx's
 * header buffers are filled field by field).
 *
 * @param headers The request's fields.
 * @returns What the walk read.
 *
 * @example Usage
 * ```ts
 * import { readFields } from "./read_fields.ts";
 * import { deepStrictEqual, strictEqual } from "node:assert/strict";
 *
 * const read = readFields(new Headers([["Host", "a"], ["X-B", "1"], ["x-b", "2"]]));
 * strictEqual(read.host, "a");
 * deepStrictEqual(read.fields, ["host", "a", "x-b", "1, 2"]);
 * ```
 */
export function readFields(headers: Headers): FieldsRead {
  const read: FieldsRead = {
    fields: [],
    host: null,
    referrer: null,
    contentLength: null,
    transferEncoding: null,
    expect: null,
    ifNoneMatch: null,
    ifModifiedSince: null,
    ifMatch: null,
    ifUnmodifiedSince: null,
    range: null,
    ifRange: null,
    repeated: false,
  };
  const fields = read.fields;
  // Each name comes once (repeated fields are joined), in lower case.
  headers.forEach((value, name) => {
    fields.push(name, value);
    switch (name) {
      case "host":
        read.host = value;
        break;
      case "referer":
        read.referrer = value;
        break;
      case "content-length":
        read.contentLength = value;
        break;
      case "transfer-encoding":
        read.transferEncoding = value;
        break;
      case "expect":
        read.expect = value;
        break;
      case "if-none-match":
        read.ifNoneMatch = value;
        break;
      case "if-modified-since":
        read.ifModifiedSince = value;
        break;
      case "if-match":
        read.ifMatch = value;
        break;
      case "if-unmodified-since":
        read.ifUnmodifiedSince = value;
        break;
      case "range":
        read.range = value;
        break;
      case "if-range":
        read.ifRange = value;
    }
  });
  // One length read: a name sent on more than one line is walked once.
  read.repeated = hasRepeatedLines(headers, fields.length);
  if (read.repeated) readFirstLines(read, headers);
  return read;
}

/**
 * For a request with a name on several lines: nginx 1.22 reads such a
 * field by its first line (`ngx_http_process_header_line`), so the fields
 * picked are their first lines, and the first lines are kept for the
 * other readers (`firstLine`). The walk's joined values are written back
 * as `Headers.get` joins them: the walk drops the `", "` after an empty
 * line, which is how a reader tells a value that may be joined.
 */
function readFirstLines(read: FieldsRead, headers: Headers): void {
  const firsts = keepFirstLines(headers);
  if (firsts.size === 0) return;
  const fields = read.fields;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (firsts.has(fields[i]!)) fields[i + 1] = headers.get(fields[i]!) ?? "";
  }
  read.referrer = firsts.get("referer") ?? read.referrer;
  read.range = firsts.get("range") ?? read.range;
}
