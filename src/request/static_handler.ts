/**
 * The static content handler of the request path: a location's file
 * (`root`, `alias`, `index`, `try_files` chose its path in the phases)
 * served through the shared cache (`static/`), the wait for a folder that
 * changed a moment ago, and the default page while no client app is
 * installed. Made once; a request's own part comes with its flow.
 *
 * @module
 */

import type { Content, PhaseIo } from "../engine/mod.ts";
import {
  kernelName,
  MAX_SETTLE_WAIT_MS,
  serveFile,
  type ServeFileOptions,
  StaticCache,
  type StaticResult,
} from "../static/mod.ts";
import type { EngineRouteDeps } from "./engine_request.ts";
import type { FlowRequest } from "./flow_types.ts";
import type { RouteFlow } from "./route_flow.ts";
import { Subrequest } from "./subrequest.ts";
import {
  carryFirstLines,
  currentOsFamily,
  derivedRequest,
  refusedRequestPath,
} from "../runtime/mod.ts";

/**
 * What an error page's file does not act on: nginx's filters see the
 * error's status (r->err_status), so no 304, 412 or range for the page.
 */
const PAGE_IGNORED = [
  "if-none-match",
  "if-modified-since",
  "if-match",
  "if-unmodified-since",
  "range",
  "if-range",
];

/** A static location's content, as the phases chose it. */
type StaticContent = Extract<Content, { kind: "static" }>;

/** The static content handler, with the file cache every location shares. */
export class StaticHandler {
  /** Small files in memory, shared by every location. */
  readonly cache: StaticCache = new StaticCache();
  /**
   * File tests of `try_files`, `index` and `if (-f …)`, through the static
   * cache's `stat`: the file handler's own `stat` of the same path in the
   * same millisecond is then no second system call (the first system call
   * of a request was a fifth of a cached static answer's CPU, profiled).
   */
  readonly io: PhaseIo = {
    family: currentOsFamily(),
    fileKind: (path) => {
      // `..` or a trailing slash: what stat() makes of the name.
      const named = kernelName(path);
      return typeof named === "string" ? kindOf(this.cache.stat(named)) : null;
    },
  };
  readonly #deps: Pick<EngineRouteDeps, "defaultPage">;

  /** @param deps The default page, read when a request needs it. */
  constructor(deps: Pick<EngineRouteDeps, "defaultPage">) {
    this.#deps = deps;
  }

  /**
   * A file, synchronously unless a folder must settle or the default page
   * is read.
   *
   * @param req The request (or an error page's copy of it).
   * @param content The file the phases chose.
   * @param request The request's part in the flow (a `RouteFlow`).
   * @returns The answer, its line written.
   */
  serve(
    req: Request,
    content: StaticContent,
    request: FlowRequest,
  ): Response | Promise<Response> {
    const { vars } = request;
    const status = request.errStatus;
    if (status !== undefined && status !== 200) req = withoutAsks(req);
    const options: ServeFileOptions = {
      path: content.path,
      root: content.root,
      conf: content.conf,
      uri: vars.uri,
      vars,
      gzipVary: content.conf.gzipVary,
      cache: this.cache,
      now: (request as RouteFlow).request.now ?? Date.now(),
      // Read in the handler's walk of the client's fields (an error page's
      // copy of the request has its own).
      asked: req === (request as RouteFlow).req
        ? (request as RouteFlow).request.fields
        : null,
    };
    if (request.errStatus !== undefined) options.errStatus = request.errStatus;
    if ((request as RouteFlow).request instanceof Subrequest) {
      options.subrequest = true;
    }
    // The gzip filter makes a response of its own from the file's answer.
    if ((request as RouteFlow).oneWrite && !content.conf.gzip.enabled) {
      options.oneWrite = true;
    }
    const result = serveFile(req, options);
    if (result.retryInMs !== undefined) {
      return this.#settled(req, { content, request, options, result });
    }
    return this.#staticAnswer(req, content, request, result);
  }

  /**
   * A folder on the path changed a moment ago: containment waits for it
   * to settle (static/settled_proof.ts), a bounded while, else the 404.
   */
  async #settled(
    req: Request,
    { content, request, options, result }: {
      content: StaticContent;
      request: FlowRequest;
      options: ServeFileOptions;
      result: StaticResult;
    },
  ): Promise<Response> {
    for (let waited = 0; result.retryInMs !== undefined;) {
      if (waited >= MAX_SETTLE_WAIT_MS) break;
      const ms = result.retryInMs;
      await result.response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, ms));
      waited += ms;
      // Later than the request's arrival: the clock of the new attempt,
      // so the `stat` it shares is no older than itself.
      options.now = Date.now();
      result = serveFile(req, options);
    }
    return await this.#staticAnswer(req, content, request, result);
  }

  /** The file's answer, its line written; the default page while no app is installed. */
  #staticAnswer(
    req: Request,
    content: StaticContent,
    request: FlowRequest,
    result: StaticResult,
  ): Response | Promise<Response> {
    const { vars } = request;
    if (
      result.response.status === 404 && content.conf.defaultPage &&
      this.#deps.defaultPage !== undefined && fileKind(content.root) !== "dir"
    ) {
      // While no client app is installed (station_default_page): its page
      // at `/`, and the rest a 404 without a line for each missing file.
      if (isIndexTarget(vars.requestUri)) {
        const page = this.#deps.defaultPage;
        const cancelled = result.response.body?.cancel();
        return (cancelled ?? Promise.resolve()).then(() =>
          page(req, vars.remoteAddr)
        );
      }
      return result.response;
    }
    // Only a streamed (uncached) file's answer has a body to tell through.
    if (result.body !== undefined) result.body.sink = request.log;
    if (result.failure) {
      request.log({
        level: result.failure.level,
        message: result.failure.message,
        ...(result.failure.osError ? { osError: result.failure.osError } : {}),
      });
    }
    return result.response;
  }
}

/**
 * An error page's request as its file sees it: without the asks nginx's
 * not-modified and range filters would not answer for a status other
 * than 200 (`=200` and `=` pages keep them).
 */
function withoutAsks(req: Request): Request {
  const headers = new Headers(req.headers);
  for (const name of PAGE_IGNORED) headers.delete(name);
  // Derived as the page's request was (a named page keeps the client's
  // method, one `new Request` may refuse).
  const page = derivedRequest(req.url, { method: req.method, headers });
  carryFirstLines(req.headers, page.headers);
  return page;
}

/**
 * What a root is, without following a failure into an exception (a root
 * of variables is the request's: it passes the check of its names first).
 */
function fileKind(path: string): "file" | "dir" | null {
  if (refusedRequestPath(path, currentOsFamily(), path.length)) return null;
  try {
    return kindOf(Deno.statSync(path));
  } catch {
    return null;
  }
}

/** What a `stat` says a path is (`null`: nothing, or neither kind). */
function kindOf(info: Deno.FileInfo | null): "file" | "dir" | null {
  if (info === null) return null;
  return info.isFile ? "file" : info.isDirectory ? "dir" : null;
}

/** `/` or `/index.html` as requested (an app route rewritten to it is not). */
function isIndexTarget(target: string): boolean {
  const path = target.split("?")[0];
  return path === "/" || path === "/index.html";
}
