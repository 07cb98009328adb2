/**
 * `ngx_http_gzip_filter_module` on a response a location answered, static
 * or proxied: `gzip on` compresses a 200, 403 or 404 whose type is in
 * `gzip_types` and whose known length reaches `gzip_min_length`, for a
 * request `ngx_http_gzip_ok` accepts, unless it is a HEAD or already has a
 * `Content-Encoding`. As nginx's header filter: `Content-Encoding: gzip`,
 * no `Content-Length` (the body goes chunked), no `Accept-Ranges`, the
 * `ETag` made weak (`ngx_http_weak_etag`), and `Vary: Accept-Encoding`
 * under `gzip_vary` once type and length qualify, whether or not this
 * client takes gzip.
 *
 * @module
 */

import { makeResponse } from "./make_response.ts";
import type { GzipConf, GzipOkConf } from "../engine/mod.ts";
import { gzipBytes, gzipStream } from "./gzip_body.ts";
import { gzipAccepted, type GzipRequest } from "./gzip_accept.ts";

/** The location settings the filter reads. */
export interface GzipFilterConf {
  /** `gzip`, `gzip_comp_level`, `gzip_min_length`, `gzip_types`. */
  gzip: GzipConf;
  /** `gzip_http_version`, `gzip_proxied`, `gzip_disable`. */
  gzipOk: GzipOkConf;
  /** `gzip_vary`. */
  gzipVary: boolean;
}

/** What {@linkcode gzipFilter} reads besides the response. */
export interface GzipFilterInput {
  /** The location that answered (after internal redirects). */
  conf: GzipFilterConf;
  /** The request. */
  request: GzipRequest;
  /**
   * A HEAD request: its head changes as a GET's would (nginx sets
   * `r->header_only` in the last header filter, after gzip's), and it has
   * no body to compress.
   */
  head: boolean;
  /** Flush each chunk of a stream (`proxy_buffering off`). */
  flush?: boolean;
}

/** Bodies whose bytes the static module handed over, to deflate in one call. */
const knownBodies = new WeakMap<Response, Uint8Array>();
/** Responses `gzip_static` already gave `Vary: Accept-Encoding`. */
const varied = new WeakSet<Response>();
/** Responses the filter already ran on ({@linkcode gzipWholeBody}). */
const filtered = new WeakSet<Response>();

/**
 * The response fields the filter reads and changes: a `Headers`, or
 * {@linkcode FieldList} over a plain list.
 */
type GzipFields = Pick<
  Headers,
  "get" | "has" | "set" | "delete" | "append"
>;

/**
 * Tells the filter a response's body bytes (a cached file sent without a
 * copy), so it deflates them without reading the body.
 *
 * @param response The response.
 * @param bytes Its whole body.
 */
export function rememberBody(response: Response, bytes: Uint8Array): void {
  knownBodies.set(response, bytes);
}

/**
 * Notes that a response carries `Vary: Accept-Encoding` for `gzip_static`,
 * so the filter does not add a second one (nginx has one `r->gzip_vary`).
 *
 * @param response The response.
 */
export function markGzipVary(response: Response): void {
  varied.add(response);
}

/**
 * Whether a `Content-Type` is in `gzip_types`. The type tested is nginx's
 * `content_type_len`: the value up to a `;` that a `charset=` parameter
 * follows, or the whole value (`ngx_http_upstream_copy_content_type`).
 *
 * @param contentType The field, or `null`.
 * @param types `gzip_types`.
 * @returns Whether the filter takes the type.
 *
 * @example Usage
 * ```ts
 * import { gzipTypeMatches } from "./gzip_filter.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const types = new Set(["text/html", "application/json"]);
 * strictEqual(gzipTypeMatches("application/json; charset=utf-8", types), true);
 * strictEqual(gzipTypeMatches("Text/HTML", types), true);
 * strictEqual(gzipTypeMatches("application/json; v=1", types), false);
 * strictEqual(gzipTypeMatches(null, new Set(["*"])), true);
 * ```
 */
export function gzipTypeMatches(
  contentType: string | null,
  types: ReadonlySet<string>,
): boolean {
  if (types.has("*")) return true;
  if (contentType === null || contentType === "") return false;
  let type = contentType;
  for (let semi = type.indexOf(";"); semi >= 0;) {
    let p = semi + 1;
    while (contentType[p] === " ") p++;
    if (p === contentType.length) break;
    if (contentType.slice(p, p + 8).toLowerCase() === "charset=") {
      type = contentType.slice(0, semi);
      break;
    }
    semi = contentType.indexOf(";", p);
  }
  return types.has(type.toLowerCase());
}

/**
 * Tells whether a request would get gzip for a type and a length, before
 * there is a response: the static module asks it to leave ranges off
 * (nginx's gzip header filter clears `allow_ranges` before the range
 * filter runs). `gzip_proxied` is read without the response's fields.
 *
 * @param input The location and the request.
 * @param contentType The type the file will be sent with.
 * @returns The least length that is compressed, or `null` when none is.
 */
export function gzipFromLength(
  input: {
    conf: Pick<GzipFilterConf, "gzip" | "gzipOk">;
    request: GzipRequest;
  },
  contentType: string,
): number | null {
  const { gzip, gzipOk } = input.conf;
  if (!gzip.enabled) return null;
  if (!gzipTypeMatches(contentType, gzip.types)) return null;
  return gzipAccepted(input.request, gzipOk, null) ? gzip.minLength : null;
}

/**
 * Applies the gzip filter to a response.
 *
 * @param response The response; its fields may change in place.
 * @param input The location, the request, and what the body is.
 * @returns The response to send: the same one, or one with a gzip body
 * (deflated as the client reads it).
 */
export function gzipFilter(
  response: Response,
  input: GzipFilterInput,
): Response {
  if (!input.conf.gzip.enabled || filtered.has(response)) return response;
  const status = response.status;
  if (status !== 200 && status !== 403 && status !== 404) return response;
  const headers = response.headers;
  const length = gzipHead(headers, status, {
    input,
    hasVary: varied.has(response),
  });
  if (length === false) return response;
  const { gzip } = input.conf;
  const init = { status, headers };
  if (input.head) {
    // The body as it was (a proxied HEAD's empty upstream body is still
    // read to its end), or an empty stream: Deno.serve would send
    // `Content-Length: 0` for none.
    return makeResponse(
      response.body ?? new ReadableStream({ start: (c) => c.close() }),
      init,
    );
  }
  const known = knownBodies.get(response);
  if (known !== undefined) {
    return makeResponse(oneChunk(gzipBytes(known, gzip.level)), init);
  }
  if (response.body === null) {
    return makeResponse(
      oneChunk(gzipBytes(new Uint8Array(), gzip.level)),
      init,
    );
  }
  // A short body of known length is read whole and deflated in one call
  // (gzip_body.ts), whether it is in memory or comes from upstream.
  return makeResponse(
    gzipStream(response.body, {
      level: gzip.level,
      length,
      flush: input.flush ?? false,
    }),
    init,
  );
}

/**
 * The filter's header part (`ngx_http_gzip_header_filter`) on a response's
 * fields, changed in place: whether the body is compressed, and its
 * declared length when it is.
 */
function gzipHead(
  headers: GzipFields,
  status: number,
  { input, hasVary }: { input: GzipFilterInput; hasVary: boolean },
): number | null | false {
  const { gzip } = input.conf;
  if (status !== 200 && status !== 403 && status !== 404) return false;
  const encoding = headers.get("content-encoding");
  if (encoding !== null && encoding !== "") return false;
  const lengthText = headers.get("content-length");
  const length = lengthText === null ? null : Number(lengthText);
  if (length !== null && length < gzip.minLength) return false;
  if (!gzipTypeMatches(headers.get("content-type"), gzip.types)) {
    return false;
  }
  if (input.conf.gzipVary && !hasVary) {
    headers.append("vary", "Accept-Encoding");
  }
  if (!gzipAccepted(input.request, input.conf.gzipOk, headers)) {
    return false;
  }
  headers.set("content-encoding", "gzip");
  headers.delete("content-length");
  headers.delete("accept-ranges");
  weakEtag(headers);
  return length;
}

/**
 * The filter on a body that is whole before its response is made (a
 * proxied answer that came with its head): the fields are changed in
 * place and the body deflated in one call, so the response is made once,
 * not made and then made again by {@linkcode gzipFilter} (which leaves the
 * result alone).
 *
 * @param fields The response's fields, lower-case names; changed in place.
 * @param body The whole body.
 * @param input The location and the request (not a HEAD).
 * @returns The response.
 *
 * @example Usage
 * ```ts
 * import { gzipWholeBody } from "./gzip_filter.ts";
 * import { NGINX_GZIP_OK } from "./gzip_accept.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const fields: [string, string][] = [["content-type", "application/json"], ["content-length", "40"]];
 * const conf = {
 *   gzip: { enabled: true, level: 1, minLength: 20, types: new Set(["application/json"]) },
 *   gzipOk: NGINX_GZIP_OK,
 *   gzipVary: false,
 * };
 * const request = { headers: new Headers({ "accept-encoding": "gzip" }), protocol: "HTTP/1.1" };
 * const response = gzipWholeBody(fields, new Uint8Array(40), { status: 200, input: { conf, request, head: false } });
 * strictEqual(response.headers.get("content-encoding"), "gzip");
 * strictEqual(response.headers.has("content-length"), false);
 * ```
 */
export function gzipWholeBody(
  fields: [string, string][],
  body: Uint8Array<ArrayBuffer>,
  { status, input }: { status: number; input: GzipFilterInput },
): Response {
  const length = gzipHead(new FieldList(fields), status, {
    input,
    hasVary: false,
  });
  const response = length === false
    ? makeResponse(body, { status, headers: fields })
    : makeResponse(oneChunk(gzipBytes(body, input.conf.gzip.level)), {
      status,
      headers: fields,
    });
  filtered.add(response);
  return response;
}

/**
 * A plain list of fields with lower-case names, read and changed as
 * `Headers` would be (names asked for in lower case).
 */
class FieldList implements GzipFields {
  #fields: [string, string][];

  /** @param fields The list, changed in place. */
  constructor(fields: [string, string][]) {
    this.#fields = fields;
  }

  /** The values of `name` joined by `, `, or `null`. */
  get(name: string): string | null {
    let value: string | null = null;
    for (const [n, v] of this.#fields) {
      if (n === name) value = value === null ? v : `${value}, ${v}`;
    }
    return value;
  }

  /** Whether `name` is there. */
  has(name: string): boolean {
    return this.#fields.some(([n]) => n === name);
  }

  /** Replaces every `name` with one field. */
  set(name: string, value: string): void {
    this.delete(name);
    this.#fields.push([name, value]);
  }

  /** Removes every `name`. */
  delete(name: string): void {
    for (let i = this.#fields.length - 1; i >= 0; i--) {
      if (this.#fields[i]![0] === name) this.#fields.splice(i, 1);
    }
  }

  /** Adds a field at the end. */
  append(name: string, value: string): void {
    this.#fields.push([name, value]);
  }
}

/** `ngx_http_weak_etag`: `W/` before a quoted tag; an unquoted one is dropped. */
function weakEtag(headers: GzipFields): void {
  const etag = headers.get("etag");
  if (etag === null || (etag.length > 2 && etag.startsWith("W/"))) return;
  if (etag.startsWith('"')) headers.set("etag", `W/${etag}`);
  else headers.delete("etag");
}

/** A body of one chunk, sent chunked as nginx sends a gzipped body. */
function oneChunk(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}
