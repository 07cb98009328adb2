/**
 * A FastCGI application's reply as the client gets it
 * (`ngx_http_upstream_process_headers` for FastCGI): its fields less those
 * nginx hides (`Status`, `X-Accel-*`), `fastcgi_hide_header`'s and the
 * framing ones, `fastcgi_pass_header` letting one through, the length the
 * head declared; no `Location` is rewritten (nginx has no
 * `fastcgi_redirect`). Under `fastcgi_intercept_errors` a status of 300 or
 * more with an `error_page` is handed over instead; an `X-Accel-Redirect`
 * is followed as the proxy follows one (`proxy/accel_redirect.ts`) unless
 * `fastcgi_ignore_headers` names it.
 *
 * @module
 */

import { escapeErrorLogText } from "../log/mod.ts";
import { byteStringFromBytes } from "../runtime/mod.ts";
import {
  type FastcgiConf,
  type LocationConf,
  type RequestVars,
  SENDABLE_STATUSES,
} from "../engine/mod.ts";
import { accelRedirect } from "../proxy/mod.ts";
import { makeResponse, streamedResponse } from "../response/mod.ts";
import { UpstreamError, type UpstreamReply } from "../upstream/mod.ts";

const NULL_BODY = new Set([204, 205, 304]);

/** A status handed to `error_page`, with the fields it keeps. */
export interface Intercepted {
  status: number;
  headers: [string, string][];
}

/**
 * The client's response for a reply, or the status to intercept.
 *
 * @param reply The application's head and body.
 * @param options The location's FastCGI settings and its `error_page` codes.
 * @returns The response, or the interception.
 * @throws {UpstreamError} For a status the runtime cannot send.
 */
export function relayReply(
  reply: UpstreamReply,
  options: {
    fastcgi: FastcgiConf;
    conf: LocationConf;
    vars: RequestVars;
  },
): { response: Response } | { intercepted: Intercepted } {
  const status = reply.head.status;
  const body = reply.body;
  if (status < 200 || status > 599) {
    discard(body);
    throw new UpstreamError(
      `upstream sent status ${status}: ${SENDABLE_STATUSES}`,
      {
        kind: "invalid-response",
        action: "reading response header from upstream",
      },
    );
  }
  if (
    status >= 300 && options.fastcgi.interceptErrors &&
    options.conf.errorPages.has(status)
  ) {
    discard(body);
    // An intercepted 401 keeps its `WWW-Authenticate`
    // (ngx_http_upstream_intercept_errors).
    const auth = status === 401
      ? reply.head.fields.find(([n]) => n.toLowerCase() === "www-authenticate")
      : undefined;
    return {
      intercepted: {
        status,
        headers: auth ? [["www-authenticate", auth[1]]] : [],
      },
    };
  }
  // After interception, as ngx_http_upstream_process_header orders them.
  if (hasAccelRedirect(reply.head.fields)) {
    const accel = accelRedirect(reply, {
      conf: accelView(options.conf, options.fastcgi),
      vars: options.vars,
      origin: "",
    });
    if (accel !== null) {
      discard(body);
      return { response: accel };
    }
  }
  const hidden = options.fastcgi.hideHeaders;
  const fields: [string, string][] = [];
  for (const [name, value] of reply.head.fields) {
    const lower = name.toLowerCase();
    if (!hidden.has(lower)) fields.push([lower, value]);
  }
  if (reply.length !== null) {
    fields.push(["content-length", String(reply.length)]);
  }
  if (NULL_BODY.has(status)) {
    discard(body);
    return { response: makeResponse(null, { status, headers: fields }) };
  }
  return { response: streamedResponse(body, { status, headers: fields }) };
}

function hasAccelRedirect(
  fields: readonly (readonly [string, string])[],
): boolean {
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]![0];
    if (name.length === 16 && name.toLowerCase() === "x-accel-redirect") {
      return true;
    }
  }
  return false;
}

const accelViews = new WeakMap<LocationConf, LocationConf>();

/**
 * The location as the proxy's `X-Accel-Redirect` reads it, with the
 * FastCGI module's settings in the proxy's places: `fastcgi_ignore_headers`,
 * and no cookie rewriting (FastCGI has none). Made once per location.
 */
function accelView(conf: LocationConf, fastcgi: FastcgiConf): LocationConf {
  let view = accelViews.get(conf);
  if (view === undefined) {
    view = {
      ...conf,
      proxyIgnoreHeaders: fastcgi.ignoreHeaders,
      proxyCookieDomain: [],
      proxyCookiePath: [],
    };
    accelViews.set(conf, view);
  }
  return view;
}

/** Cancels a body not relayed, which closes its connection. */
function discard(body: UpstreamReply["body"]): void {
  if (body instanceof ReadableStream) body.cancel().catch(() => {});
}

/**
 * A `STDERR` piece as nginx logs it: without the line breaks, dots and
 * spaces it ends in, its first byte always kept.
 *
 * @param bytes The piece.
 * @returns The text for the line, escaped as the error log escapes.
 */
export function stderrText(bytes: Uint8Array): string {
  let end = bytes.length;
  while (end > 1) {
    const b = bytes[end - 1];
    if (b !== 10 && b !== 13 && b !== 46 && b !== 32) break;
    end--;
  }
  return escapeErrorLogText(
    byteStringFromBytes(bytes.subarray(0, end)),
    "latin1",
  );
}
