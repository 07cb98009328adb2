/**
 * The content stage of the request path: the phases' decision answered,
 * by the flow itself (`return`, an error status, a folder's redirect, a
 * folder's listing or its 403) or by a content handler (static, proxy,
 * `stub_status`), and nginx's charset and headers filters on the answers
 * the flow makes.
 *
 * @module
 */

import type { Content } from "../engine/mod.ts";
import { autoindexResponse, contentTypeOf } from "../static/mod.ts";
import {
  type CharsetConf,
  charsetFilter,
  closesUnanswered,
  errorResponse,
  type ErrorResponseOptions,
  filterHeaders,
  hasHeadersFilter,
  isBuiltInError,
  isConditional,
  makeResponse,
  NO_VALIDATORS,
  preconditionStatus,
  redirectLocation,
  unansweredResponse,
} from "../response/mod.ts";
import { osErrorOf, textBytes } from "../runtime/mod.ts";
import type { ContentHandlers, FlowRequest } from "./flow_types.ts";

/** The redirect codes: `return` and `error_page` send them with `Location`. */
export const REDIRECTS: ReadonlySet<number> = new Set([
  301,
  302,
  303,
  307,
  308,
]);

/**
 * Answers one decision of the phases; `expires` and `add_header` of the
 * location apply to what the phases answer themselves, as nginx's headers
 * filter runs on every response (the static and proxy handlers apply them
 * to theirs).
 *
 * @param req The request (or an error page's copy of it).
 * @param content What the phases chose.
 * @param request The request's part in the flow.
 * @param handlers The static, proxy and `stub_status` handlers.
 * @returns The answer; a promise while a handler or a listing waits.
 */
export function answer(
  req: Request,
  content: Content,
  request: FlowRequest,
  handlers: ContentHandlers,
): Response | Promise<Response> {
  const response = decide(req, content, request, handlers);
  if (content.kind === "static" || content.kind === "proxy") return response;
  // A folder's listing is read from disk; every other answer is at hand.
  if (response instanceof Promise) {
    return response.then((done) => filtered(done, content, req, request));
  }
  return filtered(response, content, req, request);
}

/**
 * The not-modified, charset and headers filters on an answer the phases
 * made, in nginx's order (the not-modified filter's 304 or 412 is what
 * the headers filter then sees).
 */
function filtered(
  done: Response,
  content: Content,
  req: Request,
  request: FlowRequest,
): Response {
  const asked = request.conditional;
  if (
    done.status === 200 && asked !== undefined && asked !== null &&
    request.errStatus === undefined &&
    isConditional(asked)
  ) {
    const status = preconditionStatus(asked, NO_VALIDATORS);
    if (status !== 200) done = conditioned(done, status, req.method === "HEAD");
  }
  if (content.conf.charset !== null) withCharset(done, content.conf);
  if (hasHeadersFilter(content.conf)) {
    filterHeaders(done.headers, {
      status: filterStatus(done, request),
      conf: content.conf,
      vars: request.vars,
    });
  }
  return done;
}

/**
 * A 200 the gateway made up as the not-modified filter leaves it: a 304
 * without its type, length and encoding, or nginx's 412 page.
 */
function conditioned(
  done: Response,
  status: 304 | 412,
  head: boolean,
): Response {
  done.body?.cancel().catch(() => {});
  if (status === 412) return errorResponse(412, { head });
  const headers = new Headers(done.headers);
  headers.delete("content-type");
  headers.delete("content-length");
  headers.delete("content-encoding");
  headers.delete("accept-ranges");
  return makeResponse(null, { status: 304, headers });
}

/**
 * The status nginx's headers filter sees for a response: an error page's
 * status (`r->err_status`, which ngx_http_send_header puts in place of the
 * page's own) unless the gateway made the response itself, as a page that
 * fails is finalized with its own error.
 *
 * @param response The answer.
 * @param request The request, with `errStatus` while an error page is answered.
 * @returns The status for `add_header` and `expires`.
 */
export function filterStatus(response: Response, request: FlowRequest): number {
  return request.errStatus === undefined || isBuiltInError(response)
    ? response.status
    : request.errStatus;
}

/**
 * The charset filter on an answer the gateway made (nginx's pages get
 * `; charset=…` too when `charset` is set).
 *
 * @param response The answer; its fields change in place.
 * @param conf The location.
 */
export function withCharset(response: Response, conf: CharsetConf): void {
  const type = response.headers.get("content-type");
  const typed = charsetFilter(type, response.status, conf);
  if (typed !== null && typed !== type) {
    response.headers.set("content-type", typed);
  }
}

/** The content's answer: the phases' own, or its handler's. */
function decide(
  req: Request,
  content: Content,
  request: FlowRequest,
  handlers: ContentHandlers,
): Response | Promise<Response> {
  const head = req.method === "HEAD";
  switch (content.kind) {
    case "return":
      return returnResponse(req, content, request);
    case "status":
      if (content.message !== undefined) {
        request.log({ level: "error", message: content.message });
      }
      if (content.notFound !== undefined) {
        // A folder that is a file: Linux's open says ENOTDIR (Windows'
        // CreateFile has no such code for it).
        const osError = osErrorOf(
          content.notADirectory && Deno.build.os !== "windows"
            ? new Deno.errors.NotADirectory()
            : new Deno.errors.NotFound(),
        );
        request.log({
          level: "error",
          message: `"${content.notFound}" is not found`,
          ...(osError ? { osError } : {}),
        });
      }
      return statusAnswer(
        content.code,
        content.headers === undefined
          ? { head }
          : { head, headers: content.headers },
      );
    case "slash": {
      const { vars } = request;
      const location = `${vars.uri}/${vars.args === "" ? "" : `?${vars.args}`}`;
      return errorResponse(301, {
        head,
        headers: { location: redirectLocation(location, request.origin) },
      });
    }
    case "index-forbidden":
      if (
        content.conf.autoindex !== undefined && (head || req.method === "GET")
      ) {
        return listFolder(content, request, head);
      }
      request.log({
        level: "error",
        message: `directory index of "${content.path}" is forbidden`,
      });
      return errorResponse(403, { head });
    case "static":
      return handlers.static(req, content, request);
    case "proxy":
      return handlers.proxy(req, content, request);
    case "stub-status":
      return handlers.stubStatus(req);
  }
}

/** `autoindex on`: the folder's listing, or nginx's error and line. */
async function listFolder(
  content: Extract<Content, { kind: "index-forbidden" }>,
  request: FlowRequest,
  head: boolean,
): Promise<Response> {
  const { response, failures } = await autoindexResponse({
    path: content.path,
    root: content.root,
    uri: request.vars.uri,
    conf: content.conf.autoindex!,
    charset: content.conf.charset,
    head,
  });
  for (const failure of failures) {
    const osError = osErrorOf(failure.error);
    request.log({
      level: failure.level,
      message: failure.message,
      ...(osError ? { osError } : {}),
    });
  }
  return response;
}

/**
 * `return code [text]` (ngx_http_script_return_code): an error code
 * without text is nginx's own page (and `error_page` applies); a redirect
 * code takes the text as `Location` on nginx's page; any other code sends
 * the text, empty or not, typed by the URI's extension or `default_type`
 * (ngx_http_send_response). A 204, 205 or 304 goes without its body
 * (make_response.ts).
 */
function returnResponse(
  req: Request,
  content: Extract<Content, { kind: "return" }>,
  request: FlowRequest,
): Response {
  const head = req.method === "HEAD";
  const { code, text } = content;
  if (REDIRECTS.has(code)) {
    return errorResponse(code, {
      head,
      ...(text === null
        ? {}
        : { headers: { location: redirectLocation(text, request.origin) } }),
    });
  }
  if (text === null && code >= 400) return statusAnswer(code, { head });
  // The text's bytes as nginx holds them (a field's bytes that are not
  // UTF-8 go back as they came).
  const bytes = textBytes(text ?? "");
  return makeResponse(head ? null : bytes, {
    status: code,
    headers: {
      "content-type": contentTypeOf(request.vars.uri, content.conf),
      "content-length": String(bytes.length),
    },
  });
}

/**
 * The answer to a status the phases decided (`return code`, `try_files …
 * =code`, `limit_req_status`, `limit_conn_status`, the access checks):
 * nginx finalizes the request with it (ngx_http_finalize_request), which
 * sends its page, or for 408, 444 and 499 closes the connection without
 * an answer.
 */
function statusAnswer(
  code: number,
  options: ErrorResponseOptions,
): Response {
  return closesUnanswered(code)
    ? unansweredResponse(code)
    : errorResponse(code, options);
}
