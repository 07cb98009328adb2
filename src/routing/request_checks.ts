/**
 * What nginx checks while it reads a request, before any location is chosen
 * (`ngx_http_process_request_line`, `ngx_http_process_request_headers`,
 * `ngx_http_process_request_header`), for what `Deno.serve` lets through:
 * the request line the logs show, HTTP/2 without TLS, the `Host`, the
 * `Content-Length` and `Transfer-Encoding`, `TRACE`, and header names with
 * `_`. The request line's own checks are in `request_line_checks.ts`, the
 * walk that reads the fields in `read_fields.ts`, what the framing says of
 * the body in `request_body_checks.ts`.
 *
 * @module
 */

import { type ContentLength, parseContentLength } from "./content_length.ts";
import {
  DEFAULT_HEADER_BUFFERS,
  HeaderBufferReplay,
  type HeaderBuffers,
  tooLongHeaderMessage,
} from "./header_buffers.ts";
import { type FieldsRead, readFields } from "./read_fields.ts";
import { duplicateFieldLine } from "./duplicate_fields.ts";
import { isValidHost } from "./host.ts";
import type { ErrorEvent } from "../log/mod.ts";
import {
  type FieldNames,
  ignoredField,
  NGINX_FIELD_NAMES,
} from "../runtime/mod.ts";

/** An `[info]` line's own fields. */
export type CheckEvent = Pick<ErrorEvent, "level" | "message" | "action">;

/** nginx's action while it reads the header fields. */
export const READING_HEADERS = "reading client request headers";

/**
 * The statuses nginx refuses a request head with; 494 is nginx's own code
 * for "Request Header Or Cookie Too Large", sent as 400 with its own page.
 */
export type RejectStatus = 400 | 405 | 414 | 494 | 501;

/** The verdict on a request's head. */
export type HeadVerdict =
  | {
    /** Go on to routing. */
    kind: "ok";
    /** The one parse of `Content-Length`: none or a valid length. */
    contentLength: Exclude<ContentLength, { kind: "invalid" }>;
    /** Lines nginx writes but serves the request anyway (dropped fields). */
    notes: readonly CheckEvent[];
    /**
     * The fields as the walk saw them (`Headers.forEach`'s order: sorted,
     * repeated ones joined), flat: name, value, name, value… The proxy
     * reads them rather than walking the fields again: each walk of a
     * request's `Headers` sorts a new list of new pairs.
     */
    fields: readonly string[];
  }
  | {
    /** nginx refuses it: 400, 405 or 501, and the connection closes. */
    kind: "reject";
    /** The status. */
    status: RejectStatus;
    /** The `[info]` line. */
    event: CheckEvent;
    /** Lines for fields dropped before the verdict. */
    notes: readonly CheckEvent[];
    /**
     * Found once every field is read (ngx_http_process_request_header):
     * nginx has chosen the `Host` field's server by then, so the request
     * is logged with that server's logs, not the default server's.
     */
    wholeHead: boolean;
  };

/**
 * Checks a request's head as nginx does before routing: the first failure
 * in nginx's order, and the info lines for the fields nginx drops by their
 * names (`underscores_in_headers`, `ignore_invalid_headers`).
 *
 * @param req The request.
 * @param host The `Host` field, or `null`.
 * @param options `notes`: write the info lines for dropped fields;
 * `limits`: `large_client_header_buffers`; `line`: the request line, which
 * shares the first buffers with the fields; `fieldNames`: the settings for
 * field names (nginx's defaults when absent); `read`: the fields as
 * {@linkcode readFields} read them already (else read here).
 * @returns The verdict.
 *
 * @example Usage
 * ```ts
 * import { checkRequestHead } from "./request_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const req = new Request("http://a/x", { method: "POST", headers: { host: "a", "content-length": "5, 5" } });
 * strictEqual(checkRequestHead(req, "a").kind, "reject");
 * ```
 */
export function checkRequestHead(
  req: Request,
  host: string | null,
  options: {
    notes: boolean;
    limits?: HeaderBuffers;
    line?: string;
    fieldNames?: FieldNames | undefined;
    read?: FieldsRead;
  } = { notes: true },
): HeadVerdict {
  const read = options.read ?? readFields(req.headers);
  const walk = replayFields(read.fields, {
    notes: options.notes,
    limits: options.limits ?? DEFAULT_HEADER_BUFFERS,
    line: options.line ?? "",
    fieldNames: options.fieldNames ?? NGINX_FIELD_NAMES,
  });
  const notes = walk.notes;
  if (host !== null && !isValidHost(host)) {
    return refusal(notes, {
      status: 400,
      message: "client sent invalid host header",
    });
  }
  if (walk.tooLong !== null) {
    return refusal(notes, { status: 494, message: walk.tooLong });
  }
  if (read.repeated) {
    const message = duplicateFieldLine(req.headers);
    if (message !== null) return refusal(notes, { status: 400, message });
  }
  const contentLength = parseContentLength(read.contentLength);
  if (
    contentLength.kind === "invalid" &&
    contentLength.message.includes("duplicate")
  ) {
    return refusal(notes, { status: 400, message: contentLength.message });
  }
  if (host === null) {
    return refusal(notes, {
      status: 400,
      message: 'client sent HTTP/1.1 request without "Host" header',
    });
  }
  if (contentLength.kind === "invalid") {
    return refusal(notes, {
      status: 400,
      message: contentLength.message,
      wholeHead: true,
    });
  }
  const te = read.transferEncoding;
  if (te !== null) {
    // Deno.serve decodes any list ending in "chunked" and passes the rest
    // of the codings on as if the body were plain; nginx knows chunked only.
    if (te.toLowerCase() !== "chunked") {
      return refusal(notes, {
        status: 501,
        message: `client sent unknown "Transfer-Encoding": "${te}"`,
        wholeHead: true,
      });
    }
    if (contentLength.kind === "length") {
      return refusal(notes, {
        status: 400,
        message:
          'client sent "Content-Length" and "Transfer-Encoding" headers at the same time',
        wholeHead: true,
      });
    }
  }
  if (req.method === "TRACE") {
    return refusal(notes, {
      status: 405,
      message: "client sent TRACE method",
      wholeHead: true,
    });
  }
  return { kind: "ok", contentLength, notes, fields: walk.fields };
}

/**
 * A refusal of the head, made only when refused (a closure made per request
 * to build it was garbage per request).
 */
function refusal(
  notes: readonly CheckEvent[],
  { status, message, wholeHead = false }: {
    status: RejectStatus;
    message: string;
    wholeHead?: boolean;
  },
): HeadVerdict {
  return {
    kind: "reject",
    status,
    event: { level: "info", message, action: READING_HEADERS },
    notes,
    wholeHead,
  };
}

/**
 * nginx's line for each field it drops by its name, and the first line
 * that does not fit nginx's header buffers. `Deno.serve` hands the fields
 * over sorted by name, with repeated fields joined, so the buffers are
 * filled in that order. The fields nginx keeps are kept, flat, for the
 * proxy and `$http_NAME`: the list itself, or a copy without those it
 * drops.
 */
function replayFields(
  fields: readonly string[],
  options: {
    notes: boolean;
    limits: HeaderBuffers;
    line: string;
    fieldNames: FieldNames;
  },
): { notes: readonly CheckEvent[]; tooLong: string | null; fields: string[] } {
  let notes: CheckEvent[] | null = null;
  let tooLong: string | null = null;
  let kept: string[] | null = null;
  const replay = new HeaderBufferReplay(options.limits);
  replay.place(options.line.length + 2);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!;
    const value = fields[i + 1]!;
    if (tooLong === null) {
      const held = replay.place(name.length + value.length + 4);
      if (held >= 0) tooLong = tooLongHeaderMessage(`${name}: ${value}`, held);
    }
    if (!ignoredField(name, options.fieldNames)) {
      kept?.push(name, value);
      continue;
    }
    // The first field dropped: the ones before it are kept in a copy.
    kept ??= fields.slice(0, i);
    if (!options.notes) continue;
    (notes ??= []).push({
      level: "info",
      message: `client sent invalid header line: "${name}: ${value}"`,
      action: READING_HEADERS,
    });
  }
  if (tooLong === null && replay.place(2) >= 0) {
    tooLong = "client sent too large request";
  }
  return {
    notes: notes ?? NO_NOTES,
    tooLong,
    fields: kept ?? fields as string[],
  };
}

const NO_NOTES: readonly CheckEvent[] = Object.freeze([]);
