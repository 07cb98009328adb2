/**
 * What nginx checks while it reads a request, before any location is chosen
 * (`ngx_http_process_request_line`, `ngx_http_process_request_headers`,
 * `ngx_http_process_request_header`), for what `Deno.serve` lets through:
 * the request line the logs show, HTTP/2 without TLS, the `Host`, the
 * `Content-Length` and `Transfer-Encoding`, `TRACE`, and header names with
 * `_`.
 *
 * @module
 */

import { type ContentLength, parseContentLength } from "./content_length.ts";
import {
  DEFAULT_HEADER_BUFFERS,
  HeaderBufferReplay,
  type HeaderBuffers,
  tooLongHeaderMessage,
  tooLongRequestLine,
} from "./header_buffers.ts";
import { isValidHost } from "./host.ts";
import type { ErrorEvent } from "../log/mod.ts";

/** An `[info]` line's own fields. */
export type CheckEvent = Pick<ErrorEvent, "level" | "message" | "action">;

/** nginx's action while it reads the request line. */
export const READING_REQUEST_LINE = "reading client request line";
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
  };

/**
 * nginx's method token: upper-case letters, `_` and `-`
 * (`ngx_http_parse_request_line`); anything else, lower case included, is
 * "client sent invalid method".
 */
const METHOD_TOKEN = /^[A-Z_-]+$/;

/** A verdict on the request line, before the header fields are read. */
export type LineVerdict =
  | { kind: "ok" }
  | {
    kind: "reject";
    /** 400 for the method, 414 for the length. */
    status: 400 | 414;
    /** The `[info]` line, about the request line. */
    event: CheckEvent;
    /** The request as nginx logs it then (a 414 shows what it held). */
    request: string;
  };

const LINE_OK: LineVerdict = Object.freeze({ kind: "ok" });

/**
 * Checks the request line as nginx reads it: the method token, then its
 * length against `large_client_header_buffers`.
 *
 * @param method The method as sent (`Deno.serve` keeps its case).
 * @param line The request line for the logs ({@linkcode requestLine}).
 * @param limits `large_client_header_buffers`.
 * @returns The verdict.
 *
 * @example Usage
 * ```ts
 * import { checkRequestLine } from "./request_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(checkRequestLine("GET", "GET / HTTP/1.1").kind, "ok");
 * strictEqual(checkRequestLine("get", "get / HTTP/1.1").kind, "reject");
 * ```
 */
export function checkRequestLine(
  method: string,
  line: string,
  limits: HeaderBuffers = DEFAULT_HEADER_BUFFERS,
): LineVerdict {
  if (!METHOD_TOKEN.test(method)) {
    return {
      kind: "reject",
      status: 400,
      event: {
        level: "info",
        message: "client sent invalid method",
        action: READING_REQUEST_LINE,
      },
      request: line,
    };
  }
  const held = tooLongRequestLine(line, limits);
  if (held === null) return LINE_OK;
  return {
    kind: "reject",
    status: 414,
    event: {
      level: "info",
      message: "client sent too long URI",
      action: READING_REQUEST_LINE,
    },
    request: held,
  };
}

/**
 * Whether a request came over HTTP/2 without TLS (prior knowledge): the
 * only requests without a `Host` field whose URL is not `Deno.serve`'s
 * fallback `localhost:<port>`. `Deno.serve` answers the HTTP/2 preface on
 * any plain listener (`serve_http2_autodetect` in ext/http) and tells the
 * handler nothing else about the protocol; HTTP/2 carries the authority as
 * `:authority`, which `Deno.serve` puts in the URL, never in `Host`.
 *
 * @param url `req.url`.
 * @param host The `Host` field, or `null`.
 * @param port The port the gateway listens on.
 * @returns Whether to treat it as HTTP/2.
 *
 * @example Usage
 * ```ts
 * import { looksLikeHttp2 } from "./request_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(looksLikeHttp2("http://127.0.0.1:8081/api/x", null, 8081), true);
 * strictEqual(looksLikeHttp2("http://localhost:8081/api/x", null, 8081), false);
 * strictEqual(looksLikeHttp2("http://127.0.0.1:8081/api/x", "127.0.0.1:8081", 8081), false);
 * ```
 */
export function looksLikeHttp2(
  url: string,
  host: string | null,
  port: number,
): boolean {
  if (host !== null) return false;
  const fallback = port === 80
    ? "http://localhost"
    : `http://localhost:${port}`;
  const next = url.charAt(fallback.length);
  return !(url.startsWith(fallback) && (next === "/" || next === "?"));
}

/**
 * The request line for the logs. `Deno.serve` gives no version, so it is
 * `HTTP/1.1`; an HTTP/2 request is logged as nginx logs the preface it
 * refuses (`PRI * HTTP/2.0`); an absolute-form target is kept as sent when
 * it shows (its authority differs from `Host`).
 *
 * @param req The request.
 * @param parts The `Host` field, the origin-form target (from
 * `requestTarget`), and whether {@linkcode looksLikeHttp2} said so.
 * @returns e.g. `GET /api/x HTTP/1.1`.
 *
 * @example Usage
 * ```ts
 * import { requestLine } from "./request_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const req = new Request("http://other:9/api/abs?q=1", {
 *   headers: { host: "localhost:8081" },
 * });
 * strictEqual(
 *   requestLine(req, { host: "localhost:8081", target: "/api/abs?q=1", http2: false }),
 *   "GET http://other:9/api/abs?q=1 HTTP/1.1",
 * );
 * ```
 */
export function requestLine(
  req: Request,
  { host, target, http2 }: {
    host: string | null;
    target: string;
    http2: boolean;
  },
): string {
  if (http2) return "PRI * HTTP/2.0";
  // A CONNECT target is an authority, which Deno.serve puts after "http://".
  if (req.method === "CONNECT") {
    return `CONNECT ${req.url.slice(req.url.indexOf("://") + 3)} HTTP/1.1`;
  }
  const absolute = absoluteAuthority(req.url, host, target) !== null;
  return `${req.method} ${absolute ? req.url : target} HTTP/1.1`;
}

/**
 * The authority of an absolute-form request line, which nginx uses instead
 * of `Host` for the request's server (`ngx_http_process_request_uri`), so
 * for absolute redirects; `null` for origin-form. An origin-form URL is
 * `http://` + Host + target; anything else came from an absolute-form line,
 * which `req.url` holds as sent. One whose authority equals `Host` cannot be
 * told apart and needs no telling.
 *
 * @param url `req.url`.
 * @param host The `Host` field, or `null`.
 * @param target The origin-form target, from `requestTarget`.
 * @returns The authority, or `null`.
 *
 * @example Usage
 * ```ts
 * import { absoluteAuthority } from "./request_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(absoluteAuthority("http://other:9/a", "h", "/a"), "other:9");
 * strictEqual(absoluteAuthority("http://other:9?q", "h", "/?q"), "other:9");
 * strictEqual(absoluteAuthority("http://h/a", "h", "/a"), null);
 * ```
 */
export function absoluteAuthority(
  url: string,
  host: string | null,
  target: string,
): string | null {
  if (host === null || host === "") return null;
  if (
    url === `http://${host}${target}` ||
    url === `http://${urlHost(host)}${target}`
  ) {
    return null;
  }
  const start = url.indexOf("://") + 3;
  const rest = url.slice(start);
  const end = rest.search(/[/?]/);
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * Checks a request's head as nginx does before routing: the first failure
 * in nginx's order, and the info lines for header names with `_`
 * (`underscores_in_headers off` drops them).
 *
 * @param req The request.
 * @param host The `Host` field, or `null`.
 * @param options `notes`: look for `_` in field names (the lines are
 * `info`); `limits`: `large_client_header_buffers`; `line`: the request
 * line, which shares the first buffers with the fields.
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
  options: { notes: boolean; limits?: HeaderBuffers; line?: string } = {
    notes: true,
  },
): HeadVerdict {
  const walk = walkFields(req.headers, {
    notes: options.notes,
    limits: options.limits ?? DEFAULT_HEADER_BUFFERS,
    line: options.line ?? "",
  });
  const notes = walk.notes;
  const reject = (status: RejectStatus, message: string): HeadVerdict => ({
    kind: "reject",
    status,
    event: { level: "info", message, action: READING_HEADERS },
    notes,
  });
  if (host !== null && !isValidHost(host)) {
    return reject(400, "client sent invalid host header");
  }
  if (walk.tooLong !== null) return reject(494, walk.tooLong);
  const contentLength = parseContentLength(req.headers.get("content-length"));
  if (
    contentLength.kind === "invalid" &&
    contentLength.message.includes("duplicate")
  ) {
    return reject(400, contentLength.message);
  }
  if (host === null) {
    return reject(400, 'client sent HTTP/1.1 request without "Host" header');
  }
  if (contentLength.kind === "invalid") {
    return reject(400, contentLength.message);
  }
  const te = req.headers.get("transfer-encoding");
  if (te !== null) {
    // Deno.serve decodes any list ending in "chunked" and passes the rest
    // of the codings on as if the body were plain; nginx knows chunked only.
    if (te.toLowerCase() !== "chunked") {
      return reject(501, `client sent unknown "Transfer-Encoding": "${te}"`);
    }
    if (contentLength.kind === "length") {
      return reject(
        400,
        'client sent "Content-Length" and "Transfer-Encoding" headers at the same time',
      );
    }
  }
  if (req.method === "TRACE") return reject(405, "client sent TRACE method");
  return { kind: "ok", contentLength, notes };
}

/**
 * Whether a request carries a body `Deno.serve` will not hand over: a GET
 * or HEAD with a length or chunked framing (`InnerRequest.body` is `null`
 * for those methods), so forwarding it would drop the body.
 *
 * @param req The request.
 * @param contentLength Its parsed `Content-Length`.
 * @returns Whether to refuse it.
 *
 * @example Usage
 * ```ts
 * import { hasUnforwardableBody } from "./request_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const req = new Request("http://h/x", { headers: { "content-length": "3" } });
 * strictEqual(hasUnforwardableBody(req, { kind: "length", length: 3, digits: "3" }), true);
 * ```
 */
export function hasUnforwardableBody(
  req: Request,
  contentLength: Exclude<ContentLength, { kind: "invalid" }>,
): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  return (contentLength.kind === "length" && contentLength.length > 0) ||
    req.headers.has("transfer-encoding");
}

/**
 * One walk over the fields: nginx's line for each name with `_` (which it
 * drops), and the first line that does not fit nginx's header buffers.
 * `Deno.serve` hands the fields over sorted by name, with repeated fields
 * joined, so the buffers are filled in that order.
 */
function walkFields(
  headers: Headers,
  options: { notes: boolean; limits: HeaderBuffers; line: string },
): { notes: readonly CheckEvent[]; tooLong: string | null } {
  let notes: CheckEvent[] | null = null;
  let tooLong: string | null = null;
  const replay = new HeaderBufferReplay(options.limits);
  replay.place(options.line.length + 2);
  headers.forEach((value, name) => {
    if (tooLong === null) {
      const held = replay.place(name.length + value.length + 4);
      if (held >= 0) tooLong = tooLongHeaderMessage(`${name}: ${value}`, held);
    }
    if (!options.notes || !name.includes("_")) return;
    (notes ??= []).push({
      level: "info",
      message: `client sent invalid header line: "${name}: ${value}"`,
      action: READING_HEADERS,
    });
  });
  if (tooLong === null && replay.place(2) >= 0) {
    tooLong = "client sent too large request";
  }
  return { notes: notes ?? NO_NOTES, tooLong };
}

const NO_NOTES: readonly CheckEvent[] = Object.freeze([]);

/**
 * The `Host` field as `Deno.serve` puts it in `req.url`: its bytes (one
 * char per byte in `Headers`) read as UTF-8, so a non-ASCII Host is not
 * mistaken for an absolute-form request line.
 *
 * @param host The `Host` field, or `null`.
 * @returns The same text as in `req.url`.
 *
 * @example Usage
 * ```ts
 * import { urlHost } from "./request_checks.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(urlHost("\xc3\xa9:8081"), "é:8081");
 * strictEqual(urlHost("localhost"), "localhost");
 * ```
 */
export function urlHost<T extends string | null>(host: T): T {
  // deno-lint-ignore no-control-regex
  if (host === null || /^[\x00-\x7f]*$/.test(host)) return host;
  return new TextDecoder().decode(
    Uint8Array.from(host, (c) => c.charCodeAt(0)),
  ) as T;
}
