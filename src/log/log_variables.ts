/**
 * The variables `log_format` knows itself (`ngx_http_log_vars` and the
 * request, response and upstream variables real formats use), read from a
 * {@linkcode LogRecord}.
 *
 * @module
 */

import {
  formatSeconds,
  formatTimeIso8601,
  formatTimeLocal,
} from "./log_values.ts";
import type { LogRecord, UpstreamTry } from "./log_record.ts";
import { sentHeadBytes } from "./sent_head.ts";
import {
  firstLine,
  keepsUnderscores,
  underscoredField,
} from "../runtime/mod.ts";

/** A variable as a format reads it. */
export interface LogVariable {
  /** The value, or `undefined` when nginx would find none. */
  read(record: LogRecord): string | undefined;
  /** `latin1` for ByteStrings (header values), `utf-8` for text. */
  encoding: "utf-8" | "latin1";
  /**
   * Reads the request's fields when the line is written, which are kept
   * past the exchange only for a line that does.
   */
  readsFields?: boolean;
}

/** Resolves the variables this module does not know (`$host`, `$uri`, maps). */
export interface LogVariableScope {
  /**
   * @param name Lower case, without `$`.
   * @returns The variable, or `null` when nginx would not know it.
   */
  variable(name: string): LogVariable | null;
}

function tries(
  record: LogRecord,
  value: (t: UpstreamTry) => string,
): string | undefined {
  const list = record.upstream;
  if (list === undefined || list.length === 0) return undefined;
  let out = "";
  for (let i = 0; i < list.length; i++) {
    const t = list[i]!;
    if (i > 0) out += t.newGroup ? " : " : ", ";
    out += value(t);
  }
  return out;
}

function ms(value: number | null): string {
  return value === null ? "-" : formatSeconds(value);
}

/** nginx's log values: written as they are, never escaped, always found. */
const LOG_OPS: Readonly<Record<string, (r: LogRecord) => string>> = {
  "pipe": (r) => r.pipelined ? "p" : ".",
  "time_local": (r) => formatTimeLocal(r.time),
  "time_iso8601": (r) => formatTimeIso8601(r.time),
  "msec": (r) => formatSeconds(r.time.getTime()),
  "request_time": (r) => formatSeconds(r.time.getTime() - r.startMs),
  "status": (r) => String(r.status).padStart(3, "0"),
  // The head is rebuilt only for a line that reads it.
  "bytes_sent": (r) =>
    String(
      r.sent === undefined ? r.bytesSent : r.bytesSent + sentHeadBytes(r.sent),
    ),
  "body_bytes_sent": (r) => String(r.bodyBytesSent),
  "request_length": (r) => String(r.requestLength),
};

/** Variables of the request, response and upstream this module reads. */
const VARIABLES: Readonly<Record<string, LogVariable>> = {
  "remote_addr": { read: (r) => r.remoteAddr, encoding: "utf-8" },
  "remote_user": { read: (r) => r.remoteUser, encoding: "latin1" },
  "request": { read: (r) => r.request, encoding: "utf-8" },
  "connection": { read: (r) => String(r.connection), encoding: "utf-8" },
  "connection_requests": {
    read: (r) => String(r.connectionRequests),
    encoding: "utf-8",
  },
  "upstream_addr": {
    read: (r) => tries(r, (t) => t.addr),
    encoding: "utf-8",
  },
  "upstream_status": {
    read: (r) => tries(r, (t) => t.status === 0 ? "-" : String(t.status)),
    encoding: "utf-8",
  },
  "upstream_response_time": {
    read: (r) => tries(r, (t) => ms(t.responseMs)),
    encoding: "utf-8",
  },
  "upstream_connect_time": {
    read: (r) => tries(r, (t) => ms(t.connectMs)),
    encoding: "utf-8",
  },
  "upstream_header_time": {
    read: (r) => tries(r, (t) => ms(t.headerMs)),
    encoding: "utf-8",
  },
};

/** `$http_NAME` or `$sent_http_NAME`: a field by the variable's suffix (`user_agent` is `User-Agent`). */
function header(
  from: (r: LogRecord) => { get(name: string): string | null },
  suffix: string,
): LogVariable {
  const field = suffix.replaceAll("_", "-");
  return { read: (r) => from(r).get(field) ?? undefined, encoding: "latin1" };
}

/** A name the log module reads from the record itself. */
export type RecordName =
  /** One of nginx's log values: written as it is, never escaped. */
  | { value: (record: LogRecord) => string; variable?: undefined }
  /** A variable, escaped as the format says. */
  | { variable: LogVariable; value?: undefined };

/**
 * The one lookup of the names the record tells, for `log_format` and for
 * the engine's variables of the log phase (a `map` on `$status`): nginx's
 * log values, the request's, response's and upstream's variables this
 * module reads, `$http_NAME` and `$sent_http_NAME`.
 *
 * @param name Lower case, without `$`.
 * @returns How the record tells it, or `null` when it does not.
 *
 * @example Usage
 * ```ts
 * import { recordName } from "./log_variables.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(typeof recordName("status")?.value, "function");
 * strictEqual(recordName("sent_http_etag")?.variable?.encoding, "latin1");
 * strictEqual(recordName("uri"), null);
 * ```
 */
export function recordName(name: string): RecordName | null {
  const value = LOG_OPS[name];
  if (value !== undefined) return { value };
  const known = VARIABLES[name];
  if (known !== undefined) return { variable: known };
  if (name.startsWith("http_")) {
    const variable = requestHeader(name.slice(5));
    // `combined`'s two are read from the request when it starts.
    if (name !== "http_referer" && name !== "http_user_agent") {
      variable.readsFields = true;
    }
    return { variable };
  }
  if (name.startsWith("sent_http_")) {
    return { variable: header((r) => r.responseHeaders, name.slice(10)) };
  }
  return null;
}

/**
 * `$http_NAME`: the request's field by the variable's suffix, as the
 * engine's variable reads it (a field `x_token` too for `$http_x_token`
 * where the socket keeps such fields: `runtime/field_names.ts`).
 */
function requestHeader(suffix: string): LogVariable {
  const field = suffix.replaceAll("_", "-");
  // A field on several lines reads its first, as the engine's does.
  if (field === suffix) {
    return {
      read: (r) =>
        firstLine(r.headers, field, r.headers.get(field)) ?? undefined,
      encoding: "latin1",
    };
  }
  return {
    read: (r) => {
      const value = firstLine(r.headers, field, r.headers.get(field));
      const names = r.vars?.fieldNames;
      if (value !== null || !keepsUnderscores(names)) return value ?? undefined;
      return r.headers instanceof Headers
        ? underscoredField(r.headers, suffix, names) ?? undefined
        : undefined;
    },
    encoding: "latin1",
  };
}

/**
 * A value of the finished request by the name of nginx's variable
 * (`status`, `upstream_addr`, `sent_http_NAME`, …), for the engine's
 * variables of the log phase (a `map` on `$status`).
 *
 * @param name Lower case, without `$`.
 * @returns The reader (a header's value is its ByteString), or `null`
 * when the record does not tell it.
 */
export function recordValue(
  name: string,
): ((record: LogRecord) => string | undefined) | null {
  const known = recordName(name);
  return known?.value ?? known?.variable.read ?? null;
}
