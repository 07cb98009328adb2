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
import type { ErrorEvent } from "../log/mod.ts";

/** An `[info]` line's own fields. */
export type CheckEvent = Pick<ErrorEvent, "level" | "message" | "action">;

/** nginx's action while it reads the request line. */
export const READING_REQUEST_LINE = "reading client request line";
/** nginx's action while it reads the header fields. */
export const READING_HEADERS = "reading client request headers";

/** The statuses nginx refuses a request head with. */
export type RejectStatus = 400 | 405 | 501;

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

// A Host is a reg-name, IPv4 or bracketed IPv6 with an optional port (RFC
// 3986 §3.2.2); nginx rejects others with 400 (ngx_http_validate_host). This
// also keeps a Host such as "a/b" from shifting the path in `req.url`.
const VALID_HOST =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]+)(?::\d*)?$/;

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
  if (host === null || host === "" || url === `http://${host}${target}`) {
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
 * @param options `notes`: look for `_` in field names. The lines are
 * `info`, so at the default level nothing would be written, and the walk
 * over every field (Deno builds the sorted list for it) is skipped.
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
  options: { notes: boolean } = { notes: true },
): HeadVerdict {
  const notes = options.notes ? underscoreNotes(req.headers) : NO_NOTES;
  const reject = (status: RejectStatus, message: string): HeadVerdict => ({
    kind: "reject",
    status,
    event: { level: "info", message, action: READING_HEADERS },
    notes,
  });
  if (host !== null && !VALID_HOST.test(host)) {
    return reject(400, "client sent invalid host header");
  }
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

/** nginx's line for each field name with `_`, which it drops. */
function underscoreNotes(headers: Headers): readonly CheckEvent[] {
  let notes: CheckEvent[] | null = null;
  headers.forEach((value, name) => {
    if (!name.includes("_")) return;
    (notes ??= []).push({
      level: "info",
      message: `client sent invalid header line: "${name}: ${value}"`,
      action: READING_HEADERS,
    });
  });
  return notes ?? NO_NOTES;
}

const NO_NOTES: readonly CheckEvent[] = Object.freeze([]);
