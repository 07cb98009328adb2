/**
 * `auth_basic` and `auth_basic_user_file` (`ngx_http_auth_basic_module`):
 * per request, the realm is evaluated (`off` turns the check off, also when
 * a variable yields it), the credentials read, the user file scanned and
 * the password checked. Each refusal carries nginx's status, header and
 * error line as data; the caller logs them in its one place.
 *
 * @module
 */

import type { ComplexValue, RequestVars } from "../engine/mod.ts";
import { escapeErrorLogText, type LogLevel } from "../log/mod.ts";
import type { OsErrorText } from "../runtime/mod.ts";
import {
  currentOsFamily,
  fieldBytes,
  osErrorText,
  type OsFamily,
  refusedRequestPath,
} from "../runtime/mod.ts";
import { parseBasicCredentials } from "./basic_credentials.ts";
import type { PasswordChecker } from "./password_checker.ts";
import { lookupUser, type UserLookup } from "./user_file.ts";
import type { UserFileCache } from "./user_file_cache.ts";

/** One error-log line an access check asks for; the caller adds the request's fields. */
export interface AccessLogLine {
  /** nginx's level for it. */
  level: LogLevel;
  /** The message, e.g. `user "ann": password mismatch`. */
  message: string;
  /** The OS error printed after the message. */
  osError?: OsErrorText;
}

/** A location's `auth_basic` settings, merged (each directive inherits on its own). */
export interface AuthBasicConf {
  /** `auth_basic`: the realm, or `off`. */
  realm: ComplexValue;
  /** `auth_basic_user_file`, as written. */
  userFile: ComplexValue;
  /** The folder a relative user file is taken from (nginx's conf prefix). */
  confPrefix: string;
  /** Lookups remembered while the file is unchanged; without it, each request scans the file. */
  users?: UserFileCache;
}

/** What the check gave. */
export type AuthBasicOutcome =
  /** Off, or not configured: nginx's `NGX_DECLINED`. */
  | { kind: "declined" }
  /** The user's password matched. */
  | { kind: "ok"; user: string }
  /** A refusal: 401 (with `WWW-Authenticate`), 403, 500 or 503. */
  | {
    kind: "refused";
    status: 401 | 403 | 500 | 503;
    /** `Basic realm="…"` for a 401. */
    wwwAuthenticate: string | null;
    line: AccessLogLine | null;
  };

/** The request facts a check reads. */
export interface AuthBasicRequest {
  /** For the realm's and the file's variables. */
  vars: RequestVars;
  /** The `Authorization` header (a ByteString), or `null`. */
  authorization: string | null;
  /** The client address: checks take turns by client. */
  remoteAddr: string;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
}

function isAbsolute(path: string): boolean {
  return path.startsWith("/") || path.startsWith("\\") ||
    /^[A-Za-z]:[\\/]/.test(path);
}

/**
 * nginx's `Basic realm="…"`: the realm as evaluated, unescaped as nginx
 * sends it, as its bytes (`fieldBytes`: nginx.conf's text as the file's
 * UTF-8, a variable's value as nginx holds it); bytes a header cannot
 * carry (control bytes but tab: Deno's writer panics on them) are dropped.
 */
function challenge(realm: string): string {
  // deno-lint-ignore no-control-regex -- Deno's writer panics on any but tab
  const text = realm.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, "");
  return fieldBytes(`Basic realm="${text}"`);
}

/**
 * Runs the `auth_basic` check of one request.
 *
 * @param conf The location's settings, or `null` when either directive is
 * missing (nginx declines then).
 * @param request The request.
 * @param checker Where password checks run.
 * @returns The outcome.
 *
 * @example Usage
 * ```ts
 * import { checkAuthBasic } from "./auth_basic.ts";
 * import { PasswordChecker } from "./password_checker.ts";
 * import { constantValue } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const outcome = await checkAuthBasic(
 *   { realm: constantValue("Station"), userFile: constantValue("users"), confPrefix: "/etc/nginx" },
 *   { vars: {} as never, authorization: null, remoteAddr: "127.0.0.1" },
 *   new PasswordChecker(),
 * );
 * strictEqual(outcome.kind === "refused" && outcome.wwwAuthenticate, 'Basic realm="Station"');
 * ```
 */
export async function checkAuthBasic(
  conf: AuthBasicConf | null,
  request: AuthBasicRequest,
  checker: PasswordChecker,
): Promise<AuthBasicOutcome> {
  if (conf === null) return { kind: "declined" };
  const realm = conf.realm.evaluate(request.vars);
  if (realm === "off") return { kind: "declined" };
  const credentials = parseBasicCredentials(request.authorization);
  if (credentials === null) {
    return {
      kind: "refused",
      status: 401,
      wwwAuthenticate: challenge(realm),
      line: {
        level: "info",
        message: "no user/password was provided for basic authentication",
      },
    };
  }
  let path = conf.userFile.evaluate(request.vars);
  if (!isAbsolute(path)) {
    const sep = currentOsFamily() === "windows" ? "\\" : "/";
    path = conf.confPrefix.replace(/[\\/]+$/, "") + sep + path;
  }
  const user = credentials.user;
  // nginx writes the user's bytes raw; the error log shows UTF-8 as text
  // and escapes other bytes, as it does for header values.
  const shown = escapeErrorLogText(user, "latin1");
  const family = currentOsFamily();
  // A user file of variables is the request's: a name nginx for Windows
  // refuses is its ENOENT, never opened (ngx_win32_check_filename). Its
  // short names are the configuration's (`C:\PROGRA~1\…`).
  const lookup = refusedRequestPath(path, family, path.length)
    ? refusedFile(family)
    : conf.users === undefined
    ? await lookupUser(path, user)
    : await conf.users.lookup(path, user);
  const call = family === "windows" ? "CreateFile()" : "open()";
  switch (lookup.kind) {
    case "open-failed":
      return {
        kind: "refused",
        status: lookup.missing ? 403 : 500,
        wwwAuthenticate: null,
        line: {
          level: lookup.missing ? "error" : "crit",
          message: `${call} "${path}" failed`,
          ...(lookup.osError ? { osError: lookup.osError } : {}),
        },
      };
    case "read-failed":
      return {
        kind: "refused",
        status: 500,
        wwwAuthenticate: null,
        line: {
          level: "crit",
          message: `${
            currentOsFamily() === "windows" ? "ReadFile()" : "pread()"
          } "${path}" failed`,
          ...(lookup.osError ? { osError: lookup.osError } : {}),
        },
      };
    case "not-found":
      return {
        kind: "refused",
        status: 401,
        wwwAuthenticate: challenge(realm),
        line: {
          level: "error",
          message: `user "${shown}" was not found in "${path}"`,
        },
      };
  }
  const verdict = await checker.check(
    lookup.value,
    credentials.password,
    request.remoteAddr,
    request.signal,
  );
  switch (verdict) {
    case "match":
      return { kind: "ok", user };
    case "mismatch":
      return {
        kind: "refused",
        status: 401,
        wwwAuthenticate: challenge(realm),
        line: { level: "error", message: `user "${shown}": password mismatch` },
      };
    case "busy":
      return {
        kind: "refused",
        status: 503,
        wwwAuthenticate: null,
        line: {
          level: "error",
          message: `too many password checks are waiting, user "${shown}"`,
        },
      };
    case "aborted":
      return {
        kind: "refused",
        status: 500,
        wwwAuthenticate: null,
        line: null,
      };
  }
}

/** A refused user file's lookup: nginx's `ENOENT` (2), so its 403 and line. */
function refusedFile(family: OsFamily): UserLookup {
  return {
    kind: "open-failed",
    osError: { code: 2, text: osErrorText(2, family) },
    missing: true,
  };
}
