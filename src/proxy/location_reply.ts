/**
 * The upstream's reply as a proxied location relays it: the fields through
 * `proxy_hide_header`, `proxy_pass_header` and `proxy_redirect`
 * (`response_fields.ts`), or, under `proxy_intercept_errors`, a stand-in for
 * the status `error_page` takes over.
 *
 * @module
 */

import {
  type LocationConf,
  type RequestVars,
  SENDABLE_STATUSES,
} from "../engine/mod.ts";
import {
  gzipWholeBody,
  hasHeadersFilter,
  makeResponse,
  rememberBody,
  streamedResponse,
} from "../response/mod.ts";
import { UpstreamError, type UpstreamReply } from "../upstream/mod.ts";
import { locationResponseFields } from "./response_fields.ts";
import { accelRedirect } from "./accel_redirect.ts";

/** Responses that stand for an intercepted status (never sent). */
const intercepted = new WeakMap<
  Response,
  { status: number; headers: [string, string][] }
>();

/**
 * The status (and fields) a stand-in from {@linkcode relay} stands for.
 *
 * @param response A response {@linkcode relay} returned.
 * @returns The intercepted status, or `undefined` for a real response.
 */
export function interceptedBy(
  response: Response,
): { status: number; headers: [string, string][] } | undefined {
  return intercepted.get(response);
}

/**
 * The client's response for an upstream reply, or the stand-in for a
 * status `proxy_intercept_errors` hands to `error_page`
 * (`ngx_http_upstream_intercept_errors`: 300 and above, when the location
 * has an `error_page` for it; the reply's body is not read).
 *
 * @param reply The upstream's reply.
 * @param context The location, the request's variables and the origin a
 * rewritten `Location` is made absolute with.
 * @returns The response, or a stand-in {@linkcode interceptedBy} knows.
 * @throws {UpstreamError} On a reply that cannot be relayed (the server's
 * failure, as nginx's `upstream sent invalid header`).
 */
export function relay(
  reply: UpstreamReply,
  context: {
    readonly conf: LocationConf;
    readonly vars: RequestVars;
    readonly origin: string;
  },
): Response {
  const { conf, vars } = context;
  const status = reply.head.status;
  if (status < 200) {
    discard(reply);
    throw invalid(`upstream sent unexpected status ${status}`);
  }
  if (status === 205 && reply.body !== null) {
    // 205 Reset Content with a body: nginx relays it, the runtime sends no
    // body with a 205 (`Response` throws for a null body status, as RFC
    // 9110 §15.3.6 has it). The head goes, the body is dropped.
    discard(reply);
    reply = { head: reply.head, body: null, length: null };
  }
  if (
    status >= 300 && conf.proxyInterceptErrors && conf.errorPages.has(status)
  ) {
    discard(reply);
    const standIn = makeResponse(null, { status: 204 });
    const headers: [string, string][] = [];
    if (status === 401) {
      const auth = reply.head.fields.find(([n]) =>
        n.toLowerCase() === "www-authenticate"
      );
      if (auth !== undefined) headers.push(["www-authenticate", auth[1]]);
    }
    intercepted.set(standIn, { status, headers });
    return standIn;
  }
  try {
    // After interception, as ngx_http_upstream_process_header orders them.
    // The origin is made only when a field can be rewritten with it.
    const origin = readsOrigin(conf, reply.head.fields) ? context.origin : "";
    const accel = accelRedirect(reply, { conf, vars, origin });
    if (accel !== null) {
      discard(reply);
      return accel;
    }
    const headers = locationResponseFields(reply.head.fields, {
      conf,
      vars,
      origin,
      contentLength: reply.length,
    });
    const body = reply.body ?? headBody(status, headers);
    if (
      !conf.gzip.enabled || !conf.proxyBuffering ||
      !(body instanceof Uint8Array) || conf.ssi !== undefined
    ) {
      // Under `proxy_buffering off` a body goes through the gzip filter's
      // stream, which flushes each upstream read as nginx does; under
      // `ssi on` through the SSI filter first.
      return streamedResponse(body, { status, headers });
    }
    // The body came whole with the head: it is deflated in one call, not
    // read back out of the response through two streams (the proxied
    // JSON's benchmark). With no charset or headers filter to run first
    // (nginx runs both before gzip), the response is made once, gzipped.
    if (conf.charset === null && !hasHeadersFilter(conf)) {
      return gzipWholeBody(headers, body, {
        status,
        input: { conf, request: vars, head: false },
      });
    }
    const response = streamedResponse(body, { status, headers });
    rememberBody(response, body);
    return response;
  } catch {
    discard(reply);
    // A status past 599, which nginx relays: `Response` (Deno.serve) takes
    // 200 to 599 only (README, status-range).
    throw invalid(
      status > 599
        ? `upstream sent status ${status}: ${SENDABLE_STATUSES}`
        : "upstream sent invalid header",
    );
  }
}

/**
 * The body of an answer that came without one: a HEAD answer (the only
 * such here but 204, 205 and 304) whose upstream gave no length is an
 * empty stream, for which Deno.serve writes no `Content-Length`, as nginx
 * writes none; for `null` it writes `Content-Length: 0`.
 */
function headBody(
  status: number,
  headers: readonly (readonly [string, string])[],
): ReadableStream<Uint8Array> | null {
  if (status === 204 || status === 205 || status === 304) return null;
  for (let i = 0; i < headers.length; i++) {
    if (headers[i]![0] === "content-length") return null;
  }
  return new ReadableStream({ start: (c) => c.close() });
}

/**
 * Whether relaying the fields reads the origin: only `proxy_redirect`
 * rewriting a `Location` or `Refresh` field does (`response_fields.ts`),
 * for the answer's own fields and an X-Accel-Redirect's kept ones alike.
 */
function readsOrigin(
  conf: LocationConf,
  fields: readonly (readonly [string, string])[],
): boolean {
  if (conf.proxyRedirect.length === 0) return false;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    if (
      (name.length === 8 && name.toLowerCase() === "location") ||
      (name.length === 7 && name.toLowerCase() === "refresh")
    ) {
      return true;
    }
  }
  return false;
}

function invalid(message: string): UpstreamError {
  return new UpstreamError(message, {
    kind: "invalid-response",
    action: "reading response header from upstream",
  });
}

/** Cancels a reply's streamed body, which closes its connection. */
function discard(reply: UpstreamReply): void {
  if (reply.body instanceof ReadableStream) {
    reply.body.cancel().catch(() => {});
  }
}
