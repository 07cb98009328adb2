/**
 * `ngx_http_ssi_filter_module` on a response a location answered (static
 * file, proxied answer, built-in page alike): a response of a type in
 * `ssi_types` whose length is not known to be 0 is filtered, whatever its
 * status or encoding. Its head as `ngx_http_ssi_header_filter` leaves it:
 * no `Content-Length` (the body goes chunked, and a HEAD gets neither), no
 * `Accept-Ranges`, and no `Last-Modified` or `ETag` unless
 * `ssi_last_modified on`, which keeps them with the `ETag` made weak.
 * nginx's not-modified filter runs before it, so a 304 is untouched, and
 * so is a 1xx (a WebSocket's 101 tunnel).
 *
 * The body is parsed as it streams (`ngx_http_ssi_body_filter`): what one
 * read makes is sent before the next is read once it reaches
 * {@linkcode FLUSH_BYTES}, and one command's output at most is made ahead
 * of the client; an include's answer is sent a piece at a time, as the
 * client reads, before the page goes on. An include that fails is logged
 * (where it failed had not). One whose upstream fails after its head (cut
 * short, timed out) ends there and the page goes on, as nginx finalizes
 * such a subrequest as done (`ngx_http_upstream_finalize_request` flushes
 * and finalizes with the flush's code): its `stub` if it sent nothing, its
 * `set=` variable what it read. Any other failure of an include's body
 * ends the page with an error, as `ngx_http_terminate_request` cuts the
 * client's connection; a client that leaves ends the page and lets go of
 * what an include holds.
 *
 * @module
 */

import type { RequestVars } from "../engine/mod.ts";
import { gzipTypeMatches, makeResponse } from "../response/mod.ts";
import type { SsiConf } from "./conf.ts";
import { SsiContext, type SsiRequest } from "./context.ts";
import { MAX_STATE, type SsiStore } from "./store.ts";
import { byteStringFromBytes } from "../runtime/mod.ts";
import { SsiParser } from "./parser.ts";

/** An include's body that failed, read as ended. */
const ENDED: ReadableStreamReadDoneResult<Uint8Array> = Object.freeze({
  done: true,
});

/** Output held before it is handed to the client. */
export const FLUSH_BYTES = 16384;

/** What {@linkcode ssiFilter} reads besides the response. */
export interface SsiFilterInput {
  /** The location's SSI settings. */
  conf: SsiConf;
  /** The request's variables. */
  vars: RequestVars;
  /** A HEAD request: the head changes, there is no body to parse. */
  head: boolean;
  /** Writes an `[error]` line with the request's context. */
  log(message: string): void;
  /** The clock, for `$date_local` and `$date_gmt`. */
  now?: () => number;
  /**
   * Runs an `include` as a subrequest (the engine's), or names why it
   * cannot; without it an include is an error.
   */
  include?: SsiRequest["include"];
  /**
   * Whether an include's failure was logged where it happened (a relayed
   * body's error line); others are logged by the filter.
   */
  logged?: (error: unknown) => boolean;
  /**
   * Whether an include's body failure ends that include only (an
   * upstream's, after its head); others end the page. None when not given.
   */
  endsInclude?: (error: unknown) => boolean;
  /**
   * The main request's SSI variables and captures, shared with its
   * includes' filters; a new one when not given.
   */
  store?: SsiStore;
}

/**
 * Applies the SSI filter to a response.
 *
 * @param response The response.
 * @param input The location's settings and the request.
 * @returns The response, or a new one with the filtered head and body.
 *
 * @example Usage
 * ```ts
 * import { ssiFilter } from "./filter.ts";
 * import { Variables, type RequestVars } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = {
 *   types: new Set(["text/html"]),
 *   silentErrors: false,
 *   lastModified: false,
 *   valueLength: 255,
 *   scope: new Variables(new Map(), new Set()),
 * };
 * const page = new Response('<!--# set var="a" value="b" -->[<!--# echo var="a" -->]', {
 *   headers: { "content-type": "text/html", "content-length": "54", etag: '"1"' },
 * });
 * const filtered = ssiFilter(page, { conf, vars: {} as RequestVars, head: false, log: () => {} });
 * strictEqual(filtered.headers.has("content-length"), false);
 * strictEqual(filtered.headers.has("etag"), false);
 * strictEqual(await filtered.text(), "[b]");
 * ```
 */
export function ssiFilter(response: Response, input: SsiFilterInput): Response {
  const { status } = response;
  // An interim answer or a tunnel (101: its body is the connection's, and
  // a 101 cannot be rebuilt with one) and a 304 have no body to filter;
  // nginx's SSI header filter never sees the first, the not-modified
  // filter ran before it for the second.
  if (status < 200 || status === 304) return response;
  const source = response.headers;
  if (source.get("content-length") === "0") return response;
  if (!gzipTypeMatches(source.get("content-type"), input.conf.types)) {
    return response;
  }
  const headers = new Headers(source);
  headers.delete("content-length");
  headers.delete("accept-ranges");
  // Deno frames a stream itself (chunked to HTTP/1.1).
  headers.delete("transfer-encoding");
  if (!input.conf.lastModified) {
    headers.delete("last-modified");
    headers.delete("etag");
  } else weakEtag(headers);
  const init = { status, headers };
  if (status === 204 || status === 205) {
    return makeResponse(null, init);
  }
  if (input.head || response.body === null) {
    // The body as it was (a proxied HEAD's empty upstream body is still
    // read to its end, as the gzip filter leaves it), or an empty stream:
    // Deno.serve would send `Content-Length: 0` for none.
    return makeResponse(
      response.body ?? new ReadableStream({ start: (c) => c.close() }),
      init,
    );
  }
  return makeResponse(ssiStream(response.body, input), init);
}

/** `ngx_http_weak_etag`: `W/` before a quoted tag; an unquoted one is dropped. */
function weakEtag(headers: Headers): void {
  const etag = headers.get("etag");
  if (etag === null || (etag.length > 2 && etag.startsWith("W/"))) return;
  if (etag.startsWith('"')) headers.set("etag", `W/${etag}`);
  else headers.delete("etag");
}

/** The body parsed and run, read as the client reads. */
function ssiStream(
  body: ReadableStream<Uint8Array>,
  input: SsiFilterInput,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const parser = new SsiParser(input.conf.valueLength);
  // The client's leaving, for the includes' subrequests.
  const left = new AbortController();
  const ctx = new SsiContext({
    conf: input.conf,
    vars: input.vars,
    log: input.log,
    now: input.now ?? Date.now,
    ...(input.store === undefined ? {} : { store: input.store }),
    ...(input.include === undefined
      ? {}
      : { include: input.include, signal: left.signal }),
  });
  /** The body of the include being sent, read a piece a pull. */
  let included: ReadableStreamDefaultReader<Uint8Array> | null = null;
  /**
   * The include's `stub`, sent if its body ends before a byte of it
   * (`r->request_output` still 0 in `ngx_http_ssi_stub_output`).
   */
  let stubbed: Uint8Array | null = null;
  let cancelled = false;
  let chunk: Uint8Array | null = null;
  let at = 0;
  const flush = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (ctx.outBytes === 0) return;
    const pieces = ctx.out;
    let bytes: Uint8Array;
    if (pieces.length === 1) bytes = pieces[0]!;
    else {
      bytes = new Uint8Array(ctx.outBytes);
      let o = 0;
      for (const piece of pieces) {
        bytes.set(piece, o);
        o += piece.length;
      }
    }
    ctx.out = [];
    ctx.outBytes = 0;
    controller.enqueue(bytes);
  };
  /**
   * An include that failed: logged unless where it failed logged it
   * already (a relayed body's error line); one that failed in its body
   * ends the page with an error, as `ngx_http_terminate_request` cuts the
   * client's connection.
   */
  const failed = (error: unknown): void => {
    if (input.logged?.(error) === true) return;
    input.log(
      `unexpected error: ${
        error instanceof Error ? error.stack ?? error.message : error
      }`.replaceAll("\n", " "),
    );
  };
  /** Gives up the page and what it holds; `reason` is why. */
  const leave = async (reason: unknown): Promise<void> => {
    cancelled = true;
    left.abort(reason);
    const sub = included;
    included = null;
    await sub?.cancel(reason).catch(() => {});
    // An include not yet waited for: its body (an open file, an
    // upstream) is let go when it comes.
    const pending = ctx.pending;
    ctx.pending = null;
    pending?.answer.then(
      (answer) => answer.body?.cancel(reason).catch(() => {}),
      failed,
    );
    await reader.cancel(reason).catch(() => {});
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Bounded by the body: each turn reads or parses.
      for (;;) {
        if (cancelled) return;
        if (included !== null) {
          // An included answer goes out as it comes.
          let read: ReadableStreamReadResult<Uint8Array>;
          try {
            read = await included.read();
          } catch (error) {
            if (cancelled) return;
            failed(error);
            if (input.endsInclude?.(error) !== true) {
              controller.error(error);
              return leave(error);
            }
            // Its reader is done with (errored); the stub below if it
            // sent nothing.
            read = ENDED;
          }
          if (cancelled) return;
          if (!read.done) {
            if (read.value.length === 0) continue;
            stubbed = null;
            controller.enqueue(read.value);
            return;
          }
          included = null;
          const stub = stubbed;
          stubbed = null;
          if (stub !== null && stub.length > 0) {
            controller.enqueue(stub.slice());
            return;
          }
          continue;
        }
        if (ctx.pending !== null) {
          // What came before the include goes first.
          flush(controller);
          const { answer: made, set, stub } = ctx.pending;
          ctx.pending = null;
          // A subrequest that fails to be made leaves its place empty.
          const answer = await made.catch((error) => {
            failed(error);
            return null;
          });
          if (cancelled) {
            // The client left while the include was answered.
            await answer?.body?.cancel().catch(() => {});
            return;
          }
          if (set === null) {
            included = answer?.body?.getReader() ?? null;
            // No answer or no body: the stub at once.
            if (included === null && stub !== null && stub.length > 0) {
              controller.enqueue(stub.slice());
              return;
            }
            stubbed = stub;
          } else if (answer !== null) {
            const error = await keepAnswer(answer, set, ctx, input);
            if (cancelled) return;
            if (error !== null) {
              failed(error.cause);
              if (input.endsInclude?.(error.cause) !== true) {
                controller.error(error.cause);
                return leave(error.cause);
              }
            }
          }
          continue;
        }
        if (chunk === null) {
          const read = await reader.read();
          if (cancelled) return;
          if (read.done) {
            parser.end();
            flush(controller);
            controller.close();
            return;
          }
          chunk = read.value;
          at = 0;
        }
        at = parser.run(chunk, at, ctx);
        if (at >= chunk.length) {
          chunk = null;
          // What one read made goes out before the next read waits (a
          // pull that enqueues nothing would not be called again).
          if (ctx.outBytes > 0) return flush(controller);
          continue;
        }
        if (ctx.outBytes >= FLUSH_BYTES) {
          flush(controller);
          if ((controller.desiredSize ?? 0) <= 0) return;
        }
      }
    },
    cancel(reason) {
      // A pull waiting on an include's answer sees `cancelled` and drops it.
      return leave(reason);
    },
  }, { highWaterMark: 0 });
}

/**
 * `include … set=`: a successful answer's body (below 300, as
 * `ngx_http_ssi_set_variable` takes it) kept in the variable, read up to
 * the bound of SSI variables; an error's body is dropped. A body whose
 * failure ends the include only keeps what was read before it (nginx's
 * in-memory buffer as the subrequest ended).
 *
 * @returns `null`, or the failure of a body that errored.
 */
async function keepAnswer(
  answer: Response,
  name: string,
  ctx: SsiContext,
  input: SsiFilterInput,
): Promise<{ cause: unknown } | null> {
  const body = answer.body;
  if (body === null) return null;
  if (answer.status >= 300) {
    await body.cancel().catch(() => {});
    return null;
  }
  const reader = body.getReader();
  const pieces: Uint8Array[] = [];
  let size = 0;
  let failure: { cause: unknown } | null = null;
  // Bounded by MAX_STATE: past it the rest is not read.
  for (;;) {
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await reader.read();
    } catch (cause) {
      if (input.endsInclude?.(cause) !== true) return { cause };
      failure = { cause };
      break;
    }
    if (read.done) break;
    pieces.push(read.value);
    size += read.value.length;
    if (size > MAX_STATE) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.length;
  }
  ctx.keep(name, byteStringFromBytes(bytes));
  return failure;
}
