/**
 * nginx's preaccess and access phases for the location a request is in
 * (`ngx_http_core_generic_phase`, `ngx_http_core_access_phase`): first
 * `limit_req`, then `limit_conn` (nginx runs a phase's handlers in the
 * reverse order of their modules' registration), each once per request
 * (nginx marks `r->main->limit_req_status`/`limit_conn_status` once a limit
 * applied), then `allow`/`deny` and `auth_basic` combined by `satisfy`, for
 * every location the request ends up in. A subrequest (SSI's `include`)
 * shares its main request's state: its limits count once for the main
 * request and are given back when the main request ends (nginx keeps the
 * status in `r->main` and the count's cleanup in the pool the two share),
 * and it has no access phase (`ngx_http_core_access_phase` skips a request
 * whose `r != r->main`). A refusal is an answer the engine finalizes with
 * (nginx's page, `error_page`, `add_header … always`).
 *
 * @module
 */

import {
  type AccessLogLine,
  type PasswordChecker,
  runAccessPhase,
} from "../access/mod.ts";
import type { Content, LocationConf, RequestVars } from "../engine/mod.ts";
import {
  checkLimitConn,
  checkLimitReq,
  type LimitLogLine,
} from "../limits/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { RequestEvent } from "../proxy/mod.ts";

/** One request's part in the phases, kept across internal redirects. */
export interface AccessState {
  /** A `limit_req` applied (nginx's `r->main->limit_req_status`). */
  limitReqDone: boolean;
  /** A `limit_conn` applied (nginx's `r->main->limit_conn_status`). */
  limitConnDone: boolean;
  /** Gives back the request's `limit_conn` counts (see {@linkcode endAccess}). */
  release: (() => void) | null;
  /** The main request has ended: a count taken now goes back at once. */
  ended: boolean;
}

/**
 * A request's state before any phase ran.
 *
 * @returns The state, shared by the main request and its subrequests.
 */
export function newAccessState(): AccessState {
  return {
    limitReqDone: false,
    limitConnDone: false,
    release: null,
    ended: false,
  };
}

/**
 * The main request has ended (ngx_http_limit_conn_cleanup): its counts,
 * and those its subrequests took, go back; a subrequest still running
 * gives back what it takes from now on at once.
 *
 * @param state The main request's state.
 *
 * @example Usage
 * ```ts
 * import { endAccess, newAccessState } from "./access_gate.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const state = newAccessState();
 * let given = 0;
 * state.release = () => given++;
 * endAccess(state);
 * endAccess(state);
 * strictEqual(given, 1);
 * strictEqual(state.ended, true);
 * ```
 */
export function endAccess(state: AccessState): void {
  state.ended = true;
  const release = state.release;
  state.release = null;
  release?.();
}

/** The request facts the phases read. */
export interface AccessRequest {
  /** The request's variables (zone keys, realm, user file). */
  vars: RequestVars;
  /** The `Authorization` field, or `null`. */
  authorization: string | null;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Writes an error line with the request's context. */
  log: (event: RequestEvent) => void;
  /** The request's state (a subrequest's is its main request's). */
  state: AccessState;
  /** A subrequest: no access phase. */
  subrequest: boolean;
}

/** Runs the preaccess and access phases. */
export class AccessGate {
  readonly #checker: PasswordChecker;
  readonly #logger: Logger;

  /**
   * @param checker Where password checks run, fairly between clients.
   * @param logger For the lines nginx writes without the request's fields.
   */
  constructor(checker: PasswordChecker, logger: Logger) {
    this.#checker = checker;
    this.#logger = logger;
  }

  /**
   * Runs the phases for a location.
   *
   * @param conf The location.
   * @param request The request.
   * @returns `null` to go on, or the refusal to finalize with.
   */
  async run(
    conf: LocationConf,
    request: AccessRequest,
  ): Promise<Extract<Content, { kind: "status" }> | null> {
    const { state } = request;
    if (conf.limitReq !== null && !state.limitReqDone) {
      const decision = checkLimitReq(conf.limitReq, request.vars);
      this.#limitLines(decision.lines, request);
      if (decision.limitStatus !== null) state.limitReqDone = true;
      if (decision.status !== 0) {
        return { kind: "status", conf, code: decision.status };
      }
      if (decision.delayMs > 0) {
        await delay(decision.delayMs, request.signal);
        // ngx_http_test_reading: a client that left during the delay is
        // finalized with 499 there; nothing goes upstream for it, and the
        // delay paces what does.
        if (request.signal.aborted) {
          request.log({
            level: "info",
            message: "client prematurely closed connection",
          });
          return { kind: "status", conf, code: 499 };
        }
      }
    }
    if (conf.limitConn !== null && !state.limitConnDone) {
      const decision = checkLimitConn(conf.limitConn, request.vars);
      this.#limitLines(decision.lines, request);
      if (decision.limitStatus !== null) {
        state.limitConnDone = true;
        // Taken once per main request (limitConnDone): nothing to chain.
        if (state.ended) decision.release();
        else state.release = decision.release;
      }
      if (decision.status !== 0) {
        return { kind: "status", conf, code: decision.status };
      }
    }
    if (
      request.subrequest ||
      (conf.accessRules === null && conf.authBasic === null)
    ) return null;
    const decision = await runAccessPhase({
      rules: conf.accessRules,
      authBasic: conf.authBasic,
      satisfy: conf.satisfy,
    }, {
      vars: request.vars,
      authorization: request.authorization,
      remoteAddr: request.vars.remoteAddr,
      signal: request.signal,
    }, this.#checker);
    for (const line of decision.lines) request.log(event(line));
    if (decision.status === 0) return null;
    return {
      kind: "status",
      conf,
      code: decision.status,
      ...(decision.headers.length > 0 ? { headers: decision.headers } : {}),
    };
  }

  #limitLines(lines: LimitLogLine[], request: AccessRequest): void {
    for (const line of lines) {
      if (line.withRequest) {
        request.log({ level: line.level, message: line.message });
      } else this.#logger.error({ level: line.level, message: line.message });
    }
  }
}

function event(line: AccessLogLine): RequestEvent {
  return line.osError === undefined
    ? { level: line.level, message: line.message }
    : { level: line.level, message: line.message, osError: line.osError };
}

/** Waits out a `limit_req` delay; the client leaving ends the wait. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
