/**
 * nginx's SSI filter on the request path's answers, and its `include`: a
 * subrequest through the engine (`serveSubrequest`) for the main request's
 * server, whose answer goes through the SSI filter of the location that
 * answered it in turn. Runs after the content handler, before gzip, only
 * for a location with `ssi on`.
 *
 * @module
 */

import type { RequestVars } from "../engine/mod.ts";
import { relayedUpstream } from "../proxy/mod.ts";
import { type SsiConf, ssiFilter, SsiStore, stubAnswer } from "../ssi/mod.ts";
import { UpstreamError } from "../upstream/mod.ts";
import { newAccessState } from "./access_gate.ts";
import type { EngineRequest } from "./engine_request.ts";
import type { FlowDeps } from "./flow_types.ts";
import { serveSubrequest } from "./request_flow.ts";
import { RouteFlow } from "./route_flow.ts";
import {
  type IncludeBudget,
  MAX_INCLUDE_DEPTH,
  MAX_INCLUDES,
  Subrequest,
} from "./subrequest.ts";
import { derivedRequest } from "../runtime/mod.ts";

/** The SSI filter of the engine's answers, with the flow its includes run through. */
export class SsiIncludes {
  readonly #flowDeps: FlowDeps;

  /** @param flowDeps The content handlers an include is answered by. */
  constructor(flowDeps: FlowDeps) {
    this.#flowDeps = flowDeps;
  }

  /**
   * nginx's SSI filter on a main request's answer, under the location that
   * answered it; the answer as it is where that location has no `ssi on`.
   *
   * @param answer The content handler's answer.
   * @param flow The request's part in the flow.
   * @returns The filtered answer.
   */
  filter(answer: Response, flow: RouteFlow): Response {
    const ssi = flow.answered?.ssi;
    if (ssi === undefined) return answer;
    // The page's and its includes' variables are one (r->main's).
    const budget = { made: 0, store: new SsiStore() };
    return this.#filter(answer, flow, ssi, budget, 1);
  }

  /** The SSI filter on a request's (or an include's) answer. */
  #filter(
    response: Response,
    flow: RouteFlow,
    conf: SsiConf,
    budget: IncludeBudget,
    depth: number,
  ): Response {
    return ssiFilter(response, {
      conf,
      vars: flow.vars,
      head: flow.req.method === "HEAD",
      log: ssiLog(flow.request, response),
      include: this.#includer(flow, budget, depth),
      logged: loggedUpstream,
      endsInclude: upstreamBodyFailed,
      store: budget.store,
    });
  }

  /**
   * SSI's `include` for the answer of a request (or of an include): a
   * subrequest through the engine (`serveSubrequest`) for the main
   * request's server, its answer through the SSI filter of the location
   * that answered it; nested at most `MAX_INCLUDE_DEPTH` deep (nginx's
   * `subrequests cycle` line past it), `MAX_INCLUDES` in all.
   */
  #includer(
    parent: RouteFlow,
    budget: IncludeBudget,
    depth: number,
  ): (
    uri: string,
    args: string,
    signal: AbortSignal,
    stub?: Uint8Array,
  ) => Promise<Response> | string {
    return (uri, args, signal, stub) => {
      if (depth > MAX_INCLUDE_DEPTH) {
        return `subrequests cycle while processing "${uri}"`;
      }
      if (budget.made >= MAX_INCLUDES) {
        return `more than ${MAX_INCLUDES} SSI includes in one request: "${uri}"`;
      }
      budget.made++;
      const vars: RequestVars = {
        ...parent.vars,
        method: "GET",
        uri,
        args,
        argsSet: undefined,
        captures: [],
        named: {},
        mapValues: undefined,
        log: undefined,
      };
      // The phases start again from the server's level.
      delete vars.location;
      const sub = new Subrequest(parent.request, uri, args);
      sub.vars = vars;
      const url = new URL("http://localhost/");
      url.pathname = uri;
      url.search = args;
      // The client's leaving (the page's body cancelled) ends the
      // subrequest too: its upstream is closed, as nginx's finalized
      // request closes its subrequests'.
      const req = derivedRequest(url.href, {
        headers: parent.req.headers,
        signal,
      });
      const { server } = parent;
      const flow = new RouteFlow(vars, sub, req, parent.port, server);
      flow.subrequest = true;
      // Its limits count for the main request and go back when it ends.
      flow.access = parent.access ??= newAccessState();
      return Promise.resolve(
        serveSubrequest(req, server, flow, this.#flowDeps),
      ).then((answer) => {
        const response = stub === undefined ? answer : stubAnswer(answer, stub);
        const ssi = flow.answered?.ssi;
        if (ssi === undefined) return response;
        return this.#filter(response, flow, ssi, budget, depth + 1);
      });
    };
  }
}

/**
 * The SSI filter's error lines: as nginx's while it sends a file, or with
 * the `upstream:` field while it relays an answer.
 */
function ssiLog(
  request: EngineRequest,
  response: Response,
): (message: string) => void {
  const upstream = relayedUpstream(response);
  return (message) =>
    request.log(
      upstream === undefined
        ? { level: "error", message, action: "sending response to client" }
        : { level: "error", message, action: "sending to client", upstream },
    );
}

/**
 * An upstream's failure after its head (cut short, timed out, a bad
 * chunk): nginx flushes what it relayed and finalizes the subrequest with
 * the flush's code (`ngx_http_upstream_finalize_request`), so the include
 * ends there and the page goes on. One before the head that makes no
 * answer (an upgrade in a subrequest) ends the page.
 */
function upstreamBodyFailed(error: unknown): boolean {
  return error instanceof UpstreamError && error.action === "reading upstream";
}

/** A relayed body's failure, logged by the upstream client as it failed. */
function loggedUpstream(error: unknown): boolean {
  return error instanceof UpstreamError;
}
