/**
 * The upstream leg: one request forwarded with `fetch`, bodies streamed both
 * ways (`duplex: "half"`; `new Response(upstream.body)` is piped in Rust, so
 * body bytes never pass through JavaScript).
 *
 * @module
 */

import {
  clientResponseHeaders,
  fetchDecodedBody,
  upstreamRequestHeaders,
} from "./headers.ts";
import { upstreamUrl } from "./path_rewrite.ts";
import { toUpstreamError, type UpstreamError } from "./upstream_error.ts";

/** Where and how to forward. */
export interface ProxyOptions {
  /** The upstream origin, e.g. `http://127.0.0.1:8080`. */
  origin: string;
  /** The upstream host name, for resolver errors. */
  hostname: string;
  /** The path and query to request, from `routeRequest`. */
  upstreamPath: string;
  /** The client's address, for `X-Forwarded-For`. */
  clientAddress: string;
  /** The gateway's absolute `/api/` URL, for `Location` rewriting. */
  publicApiBase: string;
  /** Add `X-Forwarded-*` headers. */
  addForwarded: boolean;
  /**
   * Give up when the response headers have not arrived after this long
   * (nginx's `proxy_connect_timeout` + `proxy_read_timeout`, 60 s each;
   * `fetch` has no timeouts of its own: denoland/deno#28115).
   */
  headerTimeoutMs: number;
}

/** The result of one upstream attempt. */
export type ProxyResult =
  | { ok: true; response: Response }
  | { ok: false; error: UpstreamError };

/**
 * Forwards a request to the upstream and returns the client's response.
 *
 * `redirect: "manual"` hands 3xx answers and their `Set-Cookie` to the
 * browser instead of following them inside the gateway (denoland/deno#8351);
 * `req.signal` cancels the upstream request as soon as the client goes away
 * (with `--unstable-no-legacy-abort` it no longer fires after successful
 * responses: denoland/deno#27005).
 *
 * @param req The client's request.
 * @param options Where and how to forward.
 * @returns The response for the client, or the failure.
 */
export async function proxyRequest(
  req: Request,
  options: ProxyOptions,
): Promise<ProxyResult> {
  const headers = upstreamRequestHeaders(req.headers, {
    clientAddress: options.clientAddress,
    addForwarded: options.addForwarded,
  });
  const timer = new AbortController();
  const timeout = setTimeout(
    () => timer.abort(new DOMException("header timeout", "TimeoutError")),
    options.headerTimeoutMs,
  );
  try {
    const upstream = await fetch(
      upstreamUrl(options.origin, options.upstreamPath),
      {
        method: req.method,
        headers,
        body: req.body,
        duplex: "half",
        redirect: "manual",
        signal: AbortSignal.any([req.signal, timer.signal]),
      } as RequestInit,
    );
    const responseHeaders = clientResponseHeaders(upstream.headers, {
      upstreamOrigin: options.origin,
      publicApiBase: options.publicApiBase,
      decoded: fetchDecodedBody(upstream, headers, req.method),
    });
    return {
      ok: true,
      response: new Response(upstream.body, {
        status: upstream.status,
        statusText: upstream.statusText,
        headers: responseHeaders,
      }),
    };
  } catch (error) {
    return {
      ok: false,
      error: toUpstreamError(error, {
        timedOut: timer.signal.aborted,
        clientClosed: req.signal.aborted,
        upstreamHost: options.hostname,
      }),
    };
  } finally {
    clearTimeout(timeout);
  }
}
