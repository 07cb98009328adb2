/**
 * The facts of one finished request that access-log formats read: what the
 * handler knows of the request, the response and the upstream tries, filled
 * once when the request ends.
 *
 * @module
 */

/** Reads one header field; `Headers` is one. */
export interface HeaderReader {
  /** The field's value (a ByteString), `null` when absent. */
  get(name: string): string | null;
  /** Each `Set-Cookie` line, when the fields keep them apart. */
  getSetCookie?(): string[];
}

import type { FieldNames } from "../runtime/mod.ts";
import type { SentResponse } from "./sent_head.ts";

/** One try of an upstream server (`$upstream_*` print one entry each). */
export interface UpstreamTry {
  /** `$upstream_addr`: the peer (`127.0.0.1:8080`), or the group's name when no peer was chosen. */
  addr: string;
  /** `$upstream_status`: the status received, or nginx's 502/504 for a failed try; 0 prints `-`. */
  status: number;
  /** `$upstream_response_time` in ms, `null` prints `-`. */
  responseMs: number | null;
  /** `$upstream_connect_time` in ms, `null` (not connected) prints `-`. */
  connectMs: number | null;
  /** `$upstream_header_time` in ms, `null` prints `-`. */
  headerMs: number | null;
  /** Set on the first try after an internal redirect: nginx separates with ` : `. */
  newGroup?: boolean;
}

/**
 * The request's variables as the configuration engine holds them: opaque
 * here, read by the readers the engine resolved a format's names to. The
 * record is set on them when the line is written, so the engine's
 * variables of the log phase (`$status` in a `map`) read it.
 */
export interface RecordVars {
  /** The record of the line being written. */
  log?: LogRecord | undefined;
  /** Which request fields the socket keeps (`$http_NAME`); nginx's defaults when absent. */
  fieldNames?: FieldNames | undefined;
}

/** One finished request, as log formats read it. */
export interface LogRecord {
  // --- the request ---
  /** When the request ended: `$time_local`, `$time_iso8601`, `$msec`. */
  time: Date;
  /** When its first byte was read, epoch ms: `$request_time` is `time` minus this. */
  startMs: number;
  /** `$remote_addr`. */
  remoteAddr: string;
  /** `$remote_user` (a ByteString), `undefined` when no credentials were sent. */
  remoteUser: string | undefined;
  /** `$request`: the request line as received. */
  request: string;
  /** `$request_length`: bytes of the request line, header and body read. */
  requestLength: number;
  /** The request's fields: `$http_NAME`. */
  headers: HeaderReader;
  /** `$connection`: the connection's serial number. */
  connection: number;
  /** `$connection_requests`: requests on this connection so far, this one included. */
  connectionRequests: number;
  /** `$pipe`: the request was pipelined (`p`, else `.`). */
  pipelined: boolean;
  // --- the response ---
  /** `$status`; 0 prints `000`. */
  status: number;
  /** `$body_bytes_sent`. */
  bodyBytesSent: number;
  /**
   * `$bytes_sent` without the head: the head's bytes are added from
   * `sent` when a line reads the variable.
   */
  bytesSent: number;
  /** The response as sent, when the line may read its head. */
  sent?: SentResponse | undefined;
  /** The fields sent: `$sent_http_NAME`. */
  responseHeaders: HeaderReader;
  // --- the upstream ---
  /** The upstream tries in order; absent or empty when none (then `$upstream_*` print `-`). */
  upstream?: readonly UpstreamTry[];
  // --- the configuration ---
  /** The request's variables (`$uri`, maps, …), when the engine chose its server. */
  vars?: RecordVars | undefined;
}
