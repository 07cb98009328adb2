/**
 * The variables of nginx 1.22's other modules (ssl, upstream, realip,
 * referer, userid, ssi, stub_status, …) as nginx gives them where the
 * gateway has none of the module's features, and what the finished
 * request tells of the upstream's answer.
 *
 * @module
 */

import type { VariableReader } from "./complex_value.ts";
import type { RequestVars } from "./variables.ts";
import { formatSeconds } from "../log/mod.ts";
import { fieldText, firstLine, MONTH_NAMES } from "../runtime/mod.ts";
import { invalidReferer } from "./referers.ts";
import { setCookieValue } from "./cookie_field.ts";
import { fastcgiSplit } from "./fastcgi_conf.ts";

/**
 * The modules' variables by name: `undefined` where nginx finds no value
 * (`v->not_found`).
 */
export const OTHER_VARIABLES: Readonly<Record<string, VariableReader>> = {
  // What the gateway never has: no PROXY protocol, request body kept for
  // a variable, cache, gzip ratio, secure link, user id, slice or limit
  // outcome (each a named difference where nginx would have one, README
  // variables-without-source), and no TCP_INFO (nginx for Windows has none).
  ...Object.fromEntries([
    "proxy_protocol_addr",
    "proxy_protocol_port",
    "proxy_protocol_server_addr",
    "proxy_protocol_server_port",
    "request_body",
    "request_body_file",
    "tcpinfo_rtt",
    "tcpinfo_rttvar",
    "tcpinfo_snd_cwnd",
    "tcpinfo_rcv_space",
    "upstream_cache_status",
    "upstream_response_length",
    "upstream_bytes_received",
    "upstream_bytes_sent",
    "proxy_internal_body_length",
    "proxy_internal_chunked",
    "gzip_ratio",
    "secure_link",
    "secure_link_expires",
    "uid_got",
    "uid_set",
    "slice_range",
    "limit_req_status",
    "limit_conn_status",
    "connections_active",
    "connections_reading",
    "connections_writing",
    "connections_waiting",
    "ssl_protocol",
    "ssl_cipher",
    "ssl_ciphers",
    "ssl_curve",
    "ssl_curves",
    "ssl_session_id",
    "ssl_server_name",
    "ssl_alpn_protocol",
    "ssl_client_cert",
    "ssl_client_raw_cert",
    "ssl_client_escaped_cert",
    "ssl_client_s_dn",
    "ssl_client_i_dn",
    "ssl_client_s_dn_legacy",
    "ssl_client_i_dn_legacy",
    "ssl_client_serial",
    "ssl_client_fingerprint",
    "ssl_client_v_start",
    "ssl_client_v_end",
    "ssl_client_v_remain",
  ].map((name) => [name, () => undefined])),
  // ngx_http_ssl_variable: found on TLS connections only; no client
  // certificate is asked for, and no session is resumed or early.
  "ssl_client_verify": (r) => r.scheme === "https" ? "NONE" : undefined,
  "ssl_session_reused": (r) => r.scheme === "https" ? "." : undefined,
  "ssl_early_data": (r) => r.scheme === "https" ? "" : undefined,
  // Modules whose features the gateway has none of: their values without
  // them (no `limit_rate`, `userid`, `set_real_ip_from`).
  "limit_rate": () => "0",
  // ngx_http_fastcgi_split under the location chosen so far.
  "fastcgi_script_name": (r) =>
    fastcgiSplit(r.uri, r.location?.fastcgi).scriptName,
  "fastcgi_path_info": (r) => fastcgiSplit(r.uri, r.location?.fastcgi).pathInfo,
  // ngx_http_referer_variable under the location chosen so far.
  "invalid_referer": (r) =>
    invalidReferer(
      r.location?.referers,
      firstLine(r.headers, "referer", r.headers.get("referer")),
    ),
  "uid_reset": () => "",
  "realip_remote_addr": (r) => r.remoteAddr,
  "realip_remote_port": (r) => String(r.remotePort),
  // ngx_http_variable_http2: "h2" for an HTTP/2 request over TLS.
  "http2": (r) => r.protocol === "HTTP/2.0" ? "h2" : "",
  "date_gmt": () => ssiDate(false),
  "date_local": () => ssiDate(true),
  // Read when the line is written: the answer was sent whole (not given
  // up on, 499) (ngx_http_variable_request_completion).
  "request_completion": (r) =>
    r.log !== undefined && r.log.status !== 499 && r.log.status !== 0
      ? "OK"
      : "",
  // The connection's start is not kept: the request's is the nearest.
  "connection_time": (r) =>
    r.log === undefined
      ? "0.000"
      : formatSeconds(r.log.time.getTime() - r.log.startMs),
};

/**
 * `$upstream_http_NAME` and `$upstream_cookie_NAME`: the upstream's
 * answer as passed on to the client (a field not passed on is not there:
 * README variables-without-source); not found when no upstream answered.
 *
 * @param r The request, once its line is written.
 * @param name The field's name, lower case.
 * @returns The value, `undefined` when none.
 */
export function upstreamField(
  r: RequestVars,
  name: string,
): string | undefined {
  const log = r.log;
  if (log?.upstream === undefined || log.upstream.length === 0) {
    return undefined;
  }
  const value = log.responseHeaders.get(name);
  return value === null ? undefined : fieldText(value);
}

/**
 * `$upstream_cookie_NAME`: a cookie the upstream's answer set, as passed
 * on to the client; not found when no upstream answered or no line sets it.
 *
 * @param r The request, once its line is written.
 * @param name The cookie's name.
 * @returns The value, `undefined` when none.
 */
export function upstreamCookie(
  r: RequestVars,
  name: string,
): string | undefined {
  const log = r.log;
  if (log?.upstream === undefined || log.upstream.length === 0) {
    return undefined;
  }
  const fields = log.responseHeaders;
  // One line per field: a joined value cannot be split back (`Expires`
  // holds a comma).
  const lines = fields.getSetCookie?.() ?? [fields.get("set-cookie") ?? ""];
  const value = setCookieValue(lines, name);
  return value === undefined ? undefined : fieldText(value);
}

const DAYS = [
  "Sunday",
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
];

/** The zone's abbreviation as the runtime names it ("UTC", "GMT+8"); made once. */
let zoneNames: Intl.DateTimeFormat | undefined;

/**
 * `$date_gmt` and `$date_local` as the SSI module's default `timefmt`
 * writes them (`%A, %d-%b-%Y %H:%M:%S %Z`).
 */
function ssiDate(local: boolean): string {
  const now = new Date();
  const two = (n: number) => String(n).padStart(2, "0");
  // The same fields, read in UTC or in local time (as autoindex's date()).
  const [day, date, month, year, hours, minutes, seconds] = local
    ? [
      now.getDay(),
      now.getDate(),
      now.getMonth(),
      now.getFullYear(),
      now.getHours(),
      now.getMinutes(),
      now.getSeconds(),
    ]
    : [
      now.getUTCDay(),
      now.getUTCDate(),
      now.getUTCMonth(),
      now.getUTCFullYear(),
      now.getUTCHours(),
      now.getUTCMinutes(),
      now.getUTCSeconds(),
    ];
  const zone = local
    ? (zoneNames ??= new Intl.DateTimeFormat("en-US", {
      timeZoneName: "short",
    })).formatToParts(now).find((p) => p.type === "timeZoneName")?.value ?? ""
    : "GMT";
  return `${DAYS[day]}, ${two(date)}-${MONTH_NAMES[month]}-${year} ${
    two(hours)
  }:${two(minutes)}:${two(seconds)} ${zone}`;
}
