/**
 * Every failure of the upstream leg becomes one {@linkcode UpstreamError},
 * built only by {@linkcode toUpstreamError}, and one function,
 * {@linkcode upstreamStatus}, maps it to the status the client gets — as
 * nginx's `ngx_http_upstream_next` and Caddy's `statusError` do.
 *
 * @module
 */

import type { LogLevel, OsErrorText } from "./error_log.ts";
import {
  currentOsFamily,
  osErrorCode,
  osErrorKind,
  osErrorText,
  type OsFamily,
} from "./os_errors.ts";

/** nginx's upstream phases, printed after `while` (`ngx_http_upstream.c`). */
export type UpstreamAction =
  | "connecting to upstream"
  | "sending request to upstream"
  | "reading response header from upstream"
  | "reading upstream";

/** What went wrong, independent of platform. */
export type UpstreamFailureKind =
  | "refused"
  | "connect-failed"
  | "timed-out"
  | "reset"
  | "premature-close"
  | "invalid-response"
  | "not-resolved"
  | "client-closed"
  | "unknown";

/** An upstream failure with everything needed to log it as nginx does. */
export class UpstreamError extends Error {
  /** What went wrong. */
  readonly kind: UpstreamFailureKind;
  /** The phase, printed after `while`. */
  readonly action: UpstreamAction;
  /** The OS error to print, if nginx prints one for this failure. */
  readonly osError: OsErrorText | undefined;
  /** The level nginx logs it at. */
  readonly level: LogLevel;

  /**
   * Creates the error; use {@linkcode toUpstreamError} rather than this.
   *
   * @param message The nginx message text, e.g. `connect() failed`.
   * @param init The failure's parts.
   */
  constructor(
    message: string,
    init: {
      kind: UpstreamFailureKind;
      action: UpstreamAction;
      osError?: OsErrorText;
      level?: LogLevel;
      cause?: unknown;
    },
  ) {
    super(message, { cause: init.cause });
    this.name = "UpstreamError";
    this.kind = init.kind;
    this.action = init.action;
    this.osError = init.osError;
    this.level = init.level ?? "error";
  }
}

/** What the caller knows about how a fetch ended. */
export interface FailureContext {
  /** The gateway's own timer aborted the request. */
  timedOut?: boolean;
  /** The client went away first (`req.signal` aborted). */
  clientClosed?: boolean;
  /** The upstream host name, for resolver failures. */
  upstreamHost?: string;
  /**
   * Whose numbering the `(os error N)` codes use.
   *
   * @default {currentOsFamily()}
   */
  family?: OsFamily;
}

function detailOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Deno ≥ 2.9.2 throws TypeError("fetch failed", { cause }) with the detail
  // in the cause (denoland/deno#35618); older versions put it in the message.
  const cause = error.cause instanceof Error ? ` ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

/**
 * Parses the `(os error N)` that Deno appends to network errors.
 *
 * @param detail An error message.
 * @returns The code, or `undefined`.
 *
 * @example Usage
 * ```ts
 * import { parseOsErrorCode } from "./upstream_error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseOsErrorCode("tcp connect error: refused (os error 10061)"), 10061);
 * ```
 */
export function parseOsErrorCode(detail: string): number | undefined {
  const m = detail.match(/\(os error (\d+)\)/);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

function os(code: number, family: OsFamily): OsErrorText {
  return { code, text: osErrorText(code, family) };
}

/**
 * Turns whatever `fetch` (or its body stream) threw into an
 * {@linkcode UpstreamError}. The only place that reads Deno's error strings.
 *
 * @param error What was thrown.
 * @param context What the caller knows.
 * @returns The typed error.
 *
 * @example A refused connection on Windows
 * ```ts
 * import { toUpstreamError } from "./upstream_error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const thrown = new TypeError("fetch failed", {
 *   cause: new Error("client error (Connect): tcp connect error: (os error 10061)"),
 * });
 * const e = toUpstreamError(thrown, { family: "windows" });
 * strictEqual(e.message, "connect() failed");
 * strictEqual(e.osError?.code, 10061);
 * strictEqual(e.action, "connecting to upstream");
 * ```
 */
export function toUpstreamError(
  error: unknown,
  context: FailureContext = {},
): UpstreamError {
  const family = context.family ?? currentOsFamily();
  if (error instanceof UpstreamError) return error;
  if (context.clientClosed) {
    // nginx: "client prematurely closed connection, so upstream connection is
    // closed too" at level info, status 499 (nginx-observed §g).
    return new UpstreamError(
      "client prematurely closed connection, so upstream connection is closed too",
      {
        kind: "client-closed",
        action: "sending request to upstream",
        level: "info",
        cause: error,
      },
    );
  }
  if (context.timedOut) {
    return new UpstreamError("upstream timed out", {
      kind: "timed-out",
      action: "reading response header from upstream",
      osError: os(osErrorCode("timed-out", family), family),
      cause: error,
    });
  }
  const detail = detailOf(error);
  const code = parseOsErrorCode(detail);
  const windows = family === "windows";
  if (/client error \(Connect\)/.test(detail)) {
    if (/dns error/i.test(detail)) {
      // nginx's resolver wording (ngx_resolver.c): "<name> could not be
      // resolved (3: Host not found)".
      return new UpstreamError(
        `${context.upstreamHost ?? "upstream"} could not be resolved`,
        {
          kind: "not-resolved",
          action: "connecting to upstream",
          osError: { code: 3, text: "Host not found" },
          cause: error,
        },
      );
    }
    const kind = code === undefined ? "other" : osErrorKind(code, family);
    return new UpstreamError("connect() failed", {
      kind: kind === "refused" ? "refused" : "connect-failed",
      action: "connecting to upstream",
      ...(code === undefined ? {} : { osError: os(code, family) }),
      cause: error,
    });
  }
  if (code !== undefined) {
    const kind = osErrorKind(code, family);
    if (kind === "reset" || kind === "aborted") {
      return new UpstreamError(windows ? "WSARecv() failed" : "recv() failed", {
        kind: "reset",
        action: "reading response header from upstream",
        osError: os(code, family),
        cause: error,
      });
    }
  }
  if (/connection closed before message completed/.test(detail)) {
    return new UpstreamError("upstream prematurely closed connection", {
      kind: "premature-close",
      action: "reading response header from upstream",
      cause: error,
    });
  }
  if (/invalid HTTP|parse|Parse/.test(detail)) {
    return new UpstreamError("upstream sent no valid HTTP/1.0 header", {
      kind: "invalid-response",
      action: "reading response header from upstream",
      cause: error,
    });
  }
  return new UpstreamError(`upstream request failed: ${detail}`, {
    kind: "unknown",
    action: "reading response header from upstream",
    ...(code === undefined ? {} : { osError: os(code, family) }),
    cause: error,
  });
}

/**
 * The status the client gets for an upstream failure: 504 for the gateway's
 * own timers, 499 (logged only) when the client left, 502 for the rest.
 *
 * @param error The failure.
 * @returns The HTTP status.
 *
 * @example Usage
 * ```ts
 * import { toUpstreamError, upstreamStatus } from "./upstream_error.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(upstreamStatus(toUpstreamError(new Error("x"), { timedOut: true })), 504);
 * ```
 */
export function upstreamStatus(error: UpstreamError): 499 | 502 | 504 {
  if (error.kind === "client-closed") return 499;
  if (error.kind === "timed-out") return 504;
  return 502;
}
