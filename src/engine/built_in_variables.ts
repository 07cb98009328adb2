/**
 * The readers of nginx's built-in variables (`ngx_http_core_variables`
 * and the other modules' of nginx 1.22's build), by name: what each
 * request gives, and what nginx gives for the modules whose features the
 * gateway has none of.
 *
 * @module
 */

import type { VariableReader } from "./complex_value.ts";
import type { RequestVars } from "./variables.ts";
import { mapUri } from "./uri_map.ts";
import { PEER_HOST_VALUE } from "../upstream/mod.ts";
import { parseBasicCredentials } from "../access/mod.ts";
import {
  currentOsFamily,
  fieldText,
  firstLine,
  refusedRequestPath,
} from "../runtime/mod.ts";
import { OTHER_VARIABLES } from "./other_variables.ts";
import { cookieValue } from "./cookie_field.ts";

/**
 * A field's value in a walked list (flat: name, value…), as
 * `Headers.get` gives it: `""` when absent, repeated ones joined with
 * ", " (the walk joins all but `Set-Cookie`, listed once per line).
 */
export function fieldValue(fields: readonly string[], name: string): string {
  let value: string | null = null;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === name) {
      value = value === null ? fields[i + 1]! : `${value}, ${fields[i + 1]}`;
    }
  }
  return value ?? "";
}

/** `$http_NAME` for a variable's suffix (`user_agent` → `user-agent`). */
export function fieldName(suffix: string): string {
  return suffix.replaceAll("_", "-");
}

/** `$cookie_NAME`: `undefined` when no cookie has the name. */
export function cookie(r: RequestVars, name: string): string | undefined {
  const field = r.headers.get("cookie");
  if (field === null) return undefined;
  const value = cookieValue(field, name);
  return value === undefined ? undefined : fieldText(value);
}

/** `$arg_NAME`: `undefined` when no argument has the name. */
export function arg(r: RequestVars, name: string): string | undefined {
  if (r.args === "") return undefined;
  // ngx_http_arg: names compared without regard to case, value as sent.
  const lower = name.toLowerCase();
  for (const pair of r.args.split("&")) {
    const eq = pair.indexOf("=");
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (key.toLowerCase() === lower) return eq < 0 ? "" : pair.slice(eq + 1);
  }
  return undefined;
}

/**
 * `$args`: `undefined` when the request has none (ngx_http_variable_request
 * finds no `r->args.data`: no `?` in the target, and no internal redirect
 * set them), so a log line prints `-`, as nginx's.
 */
function args(r: RequestVars): string | undefined {
  if (r.unparsed !== undefined) return undefined;
  if (r.args !== "") return r.args;
  const set = r.argsSet ?? r.requestUri.includes("?");
  return set ? "" : undefined;
}

/** A request field by name (its first line), `undefined` when absent. */
function field(r: RequestVars, name: string): string | undefined {
  const value = firstLine(r.headers, name, r.headers.get(name));
  return value === null ? undefined : fieldText(value);
}

/**
 * `$realpath_root`: the root with its links resolved
 * (ngx_http_variable_realpath_root); the root as written when it cannot
 * be resolved (nginx logs the failure and has no value).
 */
function realRoot(root: string): string {
  // A root of variables is the request's: its names are checked first.
  if (root === "" || refusedRequestPath(root, currentOsFamily(), root.length)) {
    return root;
  }
  try {
    return Deno.realPathSync(root);
  } catch {
    return root;
  }
}

/** A random 128-bit id in hex, as `$request_id` (ngx_http_variable_request_id). */
function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let out = "";
  for (const b of bytes) out += (b < 16 ? "0" : "") + b.toString(16);
  return out;
}

/**
 * nginx's `$hostname`: the machine's name, read once and in lower case
 * (`ngx_init_cycle`). Reading it needs `--allow-sys=hostname`, one of the
 * run flags; without it the name is empty rather than every request that
 * reads it a 500.
 */
let hostname: string | undefined;

/**
 * The machine's name in lower case, read once: `$hostname`, and a
 * `server_name $hostname` (ngx_http_core_server_name takes the cycle's).
 *
 * @returns The name, or `""` when it may not be read.
 */
export function machineHostname(): string {
  if (hostname !== undefined) return hostname;
  try {
    hostname = Deno.hostname().toLowerCase();
  } catch {
    hostname = "";
  }
  return hostname;
}

/**
 * The readers of nginx's built-in variables by name, one each: `undefined`
 * where nginx finds no value (`v->not_found`), which a log line prints as
 * `-` and every other value reads as empty.
 */
export const VARIABLES: Readonly<Record<string, VariableReader>> = {
  "args": args,
  "query_string": args,
  // A request refused at its line: what nginx had not read is not found
  // (ngx_http_process_request_uri sets `$request_uri` once the target is
  // decoded).
  "request_method": (r) => r.unparsed === "line" ? undefined : r.method,
  "server_protocol": (r) => r.unparsed === "line" ? undefined : r.protocol,
  "uri": (r) => r.unparsed === "line" ? undefined : r.uri,
  "document_uri": (r) => r.unparsed === "line" ? undefined : r.uri,
  "request_uri": (r) => r.unparsed === undefined ? r.requestUri : undefined,
  "request_id": (r) => r.requestId ??= requestId(),
  "is_args": (r) => r.args === "" ? "" : "?",
  // The `Host` field's name as read (or `$server_name`'s text, left as it is).
  "host": (r) => fieldText(r.host),
  "hostname": machineHostname,
  "remote_addr": (r) => r.remoteAddr,
  "binary_remote_addr": (r) => r.remoteAddr,
  "remote_port": (r) => String(r.remotePort),
  // Values read from fields are their bytes as text (runtime/value_bytes.ts),
  // as every value variables hold.
  "remote_user": (r) => {
    const user = r.remoteUser !== ""
      ? r.remoteUser
      : parseBasicCredentials(r.headers.get("authorization"))?.user;
    return user === undefined ? undefined : fieldText(user);
  },
  "server_addr": (r) => r.serverAddr,
  "server_port": (r) => String(r.serverPort),
  "server_name": (r) => r.serverName,
  "scheme": (r) => r.scheme,
  "https": (r) => r.scheme === "https" ? "on" : "",
  "proxy_host": (r) => r.proxyHost,
  "proxy_port": (r) => {
    const colon = r.proxyHost.lastIndexOf(":");
    return colon < 0 || r.proxyHost.endsWith("]")
      ? "80"
      : r.proxyHost.slice(colon + 1);
  },
  "proxy_add_x_forwarded_for": (r) => {
    const sent = r.headers.get("x-forwarded-for");
    return sent === null ? r.remoteAddr : `${fieldText(sent)}, ${r.remoteAddr}`;
  },
  "document_root": (r) =>
    r.location === undefined ? r.documentRoot : mapUri(r.location, r).root,
  "realpath_root": (r) =>
    realRoot(
      r.location === undefined ? r.documentRoot : mapUri(r.location, r).root,
    ),
  "request_filename": (r) =>
    r.location === undefined ? r.requestFilename : mapUri(r.location, r).path,
  "content_type": (r) => field(r, "content-type"),
  // A body read whole without a declared length has its length then
  // (ngx_http_variable_content_length, headers_in.content_length_n).
  "content_length": (r) =>
    field(r, "content-length") ??
      (r.bodyLength === undefined ? undefined : String(r.bodyLength)),
  "request": (r) => `${r.method} ${r.requestUri} ${r.protocol}`,
  "nginx_version": () => "1.22.1",
  "pid": () => String(Deno.pid),
  "msec": () => (Date.now() / 1000).toFixed(3),
  ...OTHER_VARIABLES,
  // The gateway's own: the server each attempt goes to (request_head.ts).
  "station_peer": () => PEER_HOST_VALUE,
};

/**
 * The built-in names whose readers read the request's fields
 * (`r.headers`): an access log whose line reads one keeps a copy of the
 * fields past the exchange (`Variables.readsFields`). Besides these, every
 * `$http_NAME` and `$cookie_NAME` does.
 */
export const READS_FIELDS: ReadonlySet<string> = new Set([
  "content_type",
  "content_length",
  "remote_user",
  "proxy_add_x_forwarded_for",
  // Its `Referer` (ngx_http_referer_variable).
  "invalid_referer",
]);

/**
 * The built-in names nginx lets `set` assign (`NGX_HTTP_VAR_CHANGEABLE`):
 * `null` where the value `set` gives stands for the rest of the request,
 * as the gateway's `set` keeps it; otherwise why the gateway refuses it
 * (nginx's own handler changes the request, or reads the value anew).
 */
export const CHANGEABLE: Readonly<Record<string, string | null>> = {
  "args": "the gateway does not change a request's arguments this way; " +
    'use "rewrite" with "?" arguments',
  "limit_rate": "the gateway does not limit a response's rate",
  "proxy_host": "nginx sets it anew for each proxied request",
  "proxy_port": "nginx sets it anew for each proxied request",
  "invalid_referer": null,
  "uid_reset": null,
  ...Object.fromEntries(
    Object.keys(VARIABLES).filter((name) => name.startsWith("ssl_")).map((
      name,
    ) => [name, null]),
  ),
};
