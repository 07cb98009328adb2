/**
 * nginx's access phase for one request (`ngx_http_core_access_phase`,
 * `ngx_http_core_post_access_phase`): `allow`/`deny` first, then
 * `auth_basic`, combined by `satisfy`. With `all` the first refusal ends
 * the request; with `any` the first handler that allows ends the phase, and
 * refusals are kept (a 401 wins over a 403) until the end of the phase.
 *
 * @module
 */

import type { AccessList } from "./access_rules.ts";
import {
  type AccessLogLine,
  type AuthBasicConf,
  type AuthBasicRequest,
  checkAuthBasic,
} from "./auth_basic.ts";
import type { PasswordChecker } from "./password_checker.ts";

/** A location's access settings, merged. */
export interface AccessConf {
  /** `allow`/`deny`, or `null` when no level has any. */
  rules: AccessList | null;
  /** `auth_basic` with `auth_basic_user_file`, or `null` when either is unset. */
  authBasic: AuthBasicConf | null;
  /** `satisfy`. */
  satisfy: "all" | "any";
}

/** What the phase decided. */
export interface AccessDecision {
  /** `0` to go on to the next phase; else the status to finalize with. */
  status: 0 | 401 | 403 | 500 | 503;
  /** Response fields to add (`WWW-Authenticate` for a 401). */
  headers: [string, string][];
  /** Error-log lines, in order; the caller adds client, server, request, host. */
  lines: AccessLogLine[];
}

const FORBIDDEN_BY_RULE: AccessLogLine = {
  level: "error",
  message: "access forbidden by rule",
};

/**
 * Runs the access phase.
 *
 * @param conf The location's settings.
 * @param request The request facts.
 * @param checker Where password checks run.
 * @returns The decision.
 *
 * @example Usage
 * ```ts
 * import { AccessList, parseAccessRule, PasswordChecker, runAccessPhase } from "./mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const deny = parseAccessRule("deny", "all");
 * if (!deny.ok) throw new Error(deny.error);
 * const decision = await runAccessPhase(
 *   { rules: new AccessList([deny.rule]), authBasic: null, satisfy: "all" },
 *   { vars: {} as never, authorization: null, remoteAddr: "10.0.0.1" },
 *   new PasswordChecker(),
 * );
 * strictEqual(decision.status, 403);
 * strictEqual(decision.lines[0]?.message, "access forbidden by rule");
 * ```
 */
export async function runAccessPhase(
  conf: AccessConf,
  request: AuthBasicRequest,
  checker: PasswordChecker,
): Promise<AccessDecision> {
  const lines: AccessLogLine[] = [];
  const headers: [string, string][] = [];
  const any = conf.satisfy === "any";
  let accessCode: 0 | 401 | 403 = 0;

  // ngx_http_access_module
  const rule = conf.rules?.match(request.remoteAddr) ?? null;
  if (rule !== null) {
    if (!rule.deny) {
      if (any) return { status: 0, headers, lines };
    } else if (!any) {
      lines.push(FORBIDDEN_BY_RULE);
      return { status: 403, headers, lines };
    } else {
      accessCode = 403;
    }
  }

  // ngx_http_auth_basic_module
  const auth = await checkAuthBasic(conf.authBasic, request, checker);
  if (auth.kind === "refused") {
    if (auth.line !== null) lines.push(auth.line);
    if (auth.wwwAuthenticate !== null) {
      headers.push(["WWW-Authenticate", auth.wwwAuthenticate]);
    }
    if (any && (auth.status === 401 || auth.status === 403)) {
      // nginx keeps a 401 over later refusals; auth_basic is the last
      // handler, so its refusal replaces the rules' 403.
      accessCode = auth.status;
    } else {
      return { status: auth.status, headers, lines };
    }
  } else if (auth.kind === "ok" && any) {
    // The challenge of an earlier refusal is dropped with it.
    return { status: 0, headers: [], lines };
  }

  // ngx_http_core_post_access_phase
  if (accessCode === 403) lines.push(FORBIDDEN_BY_RULE);
  if (accessCode !== 0) return { status: accessCode, headers, lines };
  return { status: 0, headers: [], lines };
}
