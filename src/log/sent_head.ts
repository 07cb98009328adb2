/**
 * The response head as `Deno.serve` writes it, for the access log's
 * `$bytes_sent` (nginx counts the status line and fields with the body:
 * `r->connection->sent`) and the framing fields `$sent_http_content_length`
 * and `$sent_http_transfer_encoding` (nginx's header filter sets them
 * itself). Deno gives a handler no count of what it wrote, so the head is
 * rebuilt from the response and the request, as Deno 2 writes it over
 * HTTP/1.1 (byte-compared with a raw socket in `tests/log/sent_head_test.ts`):
 * the status line with the runtime's reason phrase, every field but the
 * framing ones in `Headers`' view (repeated fields joined by `, `, each
 * `Set-Cookie` on its own line), the framing field Deno chooses, `date`
 * unless the response has one, `connection: close` when the request asked
 * for it, and the blank line. Computed only when a line reads it.
 *
 * @module
 */

/** What the response handed to `Deno.serve` carried as its body. */
export type SentBody =
  /** No body (`null`). */
  | "empty"
  /** Bytes of a known size: the response's `Content-Length`. */
  | "bytes"
  /** A stream. */
  | "stream";

/** A response as sent, kept for the access line until it is written. */
export interface SentResponse {
  /** The status sent. */
  readonly status: number;
  /** The response's fields as handed to `Deno.serve`. */
  readonly headers: Headers;
  /** Its body's kind. */
  readonly body: SentBody;
  /** The request was a HEAD: no body follows the head. */
  readonly head: boolean;
  /** The request's `Connection` field (`null` when it had none). */
  readonly connection: string | null;
}

/**
 * The reason phrases the runtime writes (the `http` crate's canonical
 * ones); another status gets none (`HTTP/1.1 499 `).
 */
const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  101: "Switching Protocols",
  102: "Processing",
  103: "Early Hints",
  200: "OK",
  201: "Created",
  202: "Accepted",
  203: "Non Authoritative Information",
  204: "No Content",
  205: "Reset Content",
  206: "Partial Content",
  207: "Multi-Status",
  208: "Already Reported",
  226: "IM Used",
  300: "Multiple Choices",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  305: "Use Proxy",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Payload Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  418: "I'm a teapot",
  421: "Misdirected Request",
  422: "Unprocessable Entity",
  423: "Locked",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  506: "Variant Also Negotiates",
  507: "Insufficient Storage",
  508: "Loop Detected",
  510: "Not Extended",
  511: "Network Authentication Required",
};

/** `date: ` and an IMF-fixdate (always 29 characters) and CRLF. */
const DATE_LINE = 37;
/** `connection: close` and CRLF. */
const CLOSE_LINE = 19;
/** A `close` token in a `Connection` field (RFC 9110 §7.6.1). */
const CLOSE_TOKEN = /(?:^|,)[ \t]*close[ \t]*(?:,|$)/i;

/**
 * The framing field `Deno.serve` writes for a response: it drops the
 * response's own `Content-Length` and `Transfer-Encoding` and writes the
 * length of a body it knows the size of (a HEAD's from its fields), or
 * `chunked` for a stream without a length; none for 1xx, 204, 205 (a
 * `Response` holds no body for it) and 304.
 *
 * @param sent The response as sent.
 * @returns The field's name and value, or `null` when it writes none.
 *
 * @example Usage
 * ```ts
 * import { framingField } from "./sent_head.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const sent = {
 *   status: 200,
 *   headers: new Headers(),
 *   body: "stream",
 *   head: false,
 *   connection: null,
 * } as const;
 * deepStrictEqual(framingField(sent), ["transfer-encoding", "chunked"]);
 * ```
 */
export function framingField(
  sent: SentResponse,
): [name: string, value: string] | null {
  const { status, headers, body } = sent;
  // Statuses without a body: Deno.serve writes no length for them, and
  // drops the response's own (a relayed 205's `Content-Length: 3`).
  if (status < 200 || status === 204 || status === 205 || status === 304) {
    return null;
  }
  const length = headers.get("content-length");
  // A `Transfer-Encoding` among the fields makes even bytes go chunked.
  const chunked = headers.has("transfer-encoding");
  if (sent.head) {
    if (body === "stream") {
      return length === null || chunked ? null : ["content-length", length];
    }
    return ["content-length", length ?? "0"];
  }
  if (body === "empty") return ["content-length", "0"];
  if (body === "bytes" && !chunked) return ["content-length", length ?? "0"];
  if (length !== null && !chunked) return ["content-length", length];
  return ["transfer-encoding", "chunked"];
}

/**
 * The bytes of the head `Deno.serve` writes for a response over HTTP/1.1:
 * status line, fields, the framing field, `date`, `connection: close` and
 * the blank line. Field names and values are ByteStrings: one byte a
 * character.
 *
 * @param sent The response as sent.
 * @returns The head's size in bytes.
 *
 * @example Usage
 * ```ts
 * import { sentHeadBytes } from "./sent_head.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * // "HTTP/1.1 200 OK\r\n", "x-a: 1\r\n", "content-length: 3\r\n",
 * // "date: …\r\n", "connection: close\r\n", "\r\n"
 * const sent = {
 *   status: 200,
 *   headers: new Headers({ "x-a": "1", "content-length": "3" }),
 *   body: "bytes",
 *   head: false,
 *   connection: "close",
 * } as const;
 * strictEqual(sentHeadBytes(sent), 17 + 8 + 19 + 37 + 19 + 2);
 * ```
 */
export function sentHeadBytes(sent: SentResponse): number {
  const reason = REASONS[sent.status] ?? "";
  // "HTTP/1.1 " status " " reason CRLF
  let bytes = 9 + 3 + 1 + reason.length + 2;
  let date = false;
  sent.headers.forEach((value, name) => {
    if (name === "content-length" || name === "transfer-encoding") return;
    if (name === "set-cookie") return;
    if (name === "date") date = true;
    bytes += name.length + 2 + value.length + 2;
  });
  for (const cookie of sent.headers.getSetCookie()) {
    bytes += 12 + cookie.length + 2;
  }
  const framing = framingField(sent);
  if (framing !== null) bytes += framing[0].length + framing[1].length + 4;
  if (!date) bytes += DATE_LINE;
  if (sent.connection !== null && CLOSE_TOKEN.test(sent.connection)) {
    bytes += CLOSE_LINE;
  }
  return bytes + 2;
}

/**
 * The response's fields as the client got them, for `$sent_http_NAME`:
 * the response's own, with the framing fields as `Deno.serve` writes them
 * (see {@linkcode framingField}). A length the gateway keeps beside
 * `chunked` for a TLS client (`response/tls_one_write.ts`) stays the
 * length: nginx sends it there.
 *
 * @param sent The response as sent.
 * @returns A reader by lower-case name.
 *
 * @example Usage
 * ```ts
 * import { sentFields } from "./sent_head.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const fields = sentFields({
 *   status: 200,
 *   headers: new Headers({ "content-length": "13" }),
 *   body: "bytes",
 *   head: false,
 *   connection: null,
 * });
 * strictEqual(fields.get("content-length"), "13");
 * strictEqual(fields.get("transfer-encoding"), null);
 * ```
 */
export function sentFields(
  sent: SentResponse,
): { get(name: string): string | null; getSetCookie(): string[] } {
  return {
    getSetCookie: () => sent.headers.getSetCookie(),
    get(name) {
      const own = sent.headers.get(name);
      if (name !== "content-length" && name !== "transfer-encoding") return own;
      const framing = framingField(sent);
      if (framing === null) return null;
      if (name === "content-length") {
        return framing[0] === name ? framing[1] : own;
      }
      return framing[0] === name && !sent.headers.has("content-length")
        ? framing[1]
        : null;
    },
  };
}
