/**
 * What an upstream response's head says of its body and its connection
 * (RFC 9112 §6.3, §9.3): how the body is delimited, whether the connection
 * stays open, and the fields that are never relayed as they are.
 *
 * @module
 */

import { escapeErrorLogText } from "../log/mod.ts";
import type { ResponseHead } from "./http1.ts";
import { InvalidResponseError } from "./field_line_parser.ts";

/** How the response body is delimited. */
export type ResponseFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" };

/**
 * A response's `Transfer-Encoding`, every field joined, or `undefined`. Its
 * presence is the one decision both sides of the proxy read: the body is
 * framed by it, and the upstream's `Content-Length` then describes nothing
 * and is not relayed (RFC 9112 §6.3 rule 3; nginx clears
 * `content_length_n` for a chunked response).
 *
 * @param fields The response's fields, as received.
 * @returns The coding list, or `undefined` without the field.
 *
 * @example Usage
 * ```ts
 * import { transferEncodingOf } from "./response_framing.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(transferEncodingOf([["Content-Length", "100"], ["Transfer-Encoding", "chunked"]]), "chunked");
 * ```
 */
export function transferEncodingOf(
  fields: readonly (readonly [string, string])[],
): string | undefined {
  let te: string | undefined;
  // By index, not destructured: `[name, value] =` runs the iterator
  // protocol per field (an iterator and its results: 0.6 KB per proxied
  // answer in an allocation profile).
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    const name = field[0];
    if (name.length === 17 && name.toLowerCase() === "transfer-encoding") {
      te = te === undefined ? field[1] : `${te}, ${field[1]}`;
    }
  }
  return te;
}

/**
 * Decides how a response body is delimited (RFC 9112 §6.3).
 *
 * @param head The parsed head.
 * @param method The request method (a HEAD answer has no body).
 * @returns The framing.
 * @throws {InvalidResponseError} On a malformed or conflicting length.
 *
 * @example Usage
 * ```ts
 * import { responseFraming } from "./response_framing.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const head = { version: "HTTP/1.1", status: 200, reason: "OK", fields: [["Content-Length", "5"]] as [string, string][], headLength: 0 };
 * deepStrictEqual(responseFraming(head, "GET"), { kind: "length", length: 5 });
 * ```
 */
export function responseFraming(
  head: ResponseHead,
  method: string,
): ResponseFraming {
  if (
    method === "HEAD" || head.status < 200 || head.status === 204 ||
    head.status === 304
  ) return { kind: "none" };
  let length: string | undefined;
  // Indexed, without destructuring: an iterator and a pair per field are
  // garbage per response (allocation profile of a small POST).
  const fields = head.fields;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    const value = fields[i]![1];
    // The length first: a lower-case copy of every name is garbage per
    // response.
    if (name.length === 14 && name.toLowerCase() === "content-length") {
      if (length !== undefined && length !== value) {
        throw new InvalidResponseError(
          `upstream sent duplicate header line: "${name}: ${
            escapeErrorLogText(value, "latin1")
          }", previous value: "Content-Length: ${
            escapeErrorLogText(length, "latin1")
          }"`,
        );
      }
      length = value;
    }
  }
  const te = transferEncodingOf(head.fields);
  if (te !== undefined) {
    if (/(?:^|,)\s*chunked\s*$/i.test(te)) return { kind: "chunked" };
    // Chunked not last: read to the close (RFC 9112 §6.3 rule 4).
    return { kind: "close" };
  }
  if (length !== undefined) {
    if (!/^\d{1,15}$/.test(length)) {
      throw new InvalidResponseError(
        `upstream sent invalid "Content-Length" header: "Content-Length: ${
          escapeErrorLogText(length, "latin1")
        }"`,
      );
    }
    return { kind: "length", length: Number(length) };
  }
  return { kind: "close" };
}

/**
 * Tells whether the connection may carry another request after this
 * response: HTTP/1.1 without `Connection: close`.
 *
 * @param head The parsed head.
 * @returns Whether to keep the connection.
 */
export function keepsAlive(head: ResponseHead): boolean {
  if (head.version !== "HTTP/1.1") return false;
  const fields = head.fields;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    if (
      name.length === 10 && name.toLowerCase() === "connection" &&
      /\bclose\b/i.test(fields[i]![1])
    ) {
      return false;
    }
  }
  return true;
}

/**
 * An answer's fields never relayed to the client: nginx ignores
 * `Connection`, `Keep-Alive`, `Transfer-Encoding` and `Content-Length` (it
 * frames the body itself); the gateway also keeps the other hop-by-hop
 * fields (`Upgrade`, `TE`, `Trailer`, `Proxy-Connection`), which describe
 * the upstream's connection, not the client's. For `proxy_pass` and
 * `fastcgi_pass` alike.
 */
export const NEVER_RELAYED: readonly string[] = [
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
];
