/**
 * nginx's variables (`ngx_http_variables.c`, and the proxy, upstream and
 * rewrite modules' own): what each request exposes to compiled values, and
 * the readers a configuration resolves names to once. Values are computed
 * on first read; most requests read none.
 *
 * @module
 */

import type { VariableReader, VariableScope } from "./complex_value.ts";
import type { LocationConf, MapConf } from "./model.ts";
import { mapUri } from "./uri_map.ts";
import { PEER_HOST_VALUE } from "../upstream/mod.ts";
import { parseBasicCredentials } from "../access/mod.ts";
import { fieldText } from "../runtime/mod.ts";

/** One request as variables see it. Filled by the handler; phases update it. */
export interface RequestVars {
  /** `$request_method`. */
  method: string;
  /** `$request_uri`: the target as the client sent it (path and query). */
  requestUri: string;
  /** `$uri`: the normalised, decoded path; rewrites and redirects change it. */
  uri: string;
  /** `$args`: the query without `?`; rewrites may change it. */
  args: string;
  /** The request's header fields. */
  headers: Headers;
  /**
   * The same fields as the head's check walked them (flat: name, value…,
   * in `Headers.forEach`'s order), when they are `headers`' own: `$http_*`
   * reads them without a `Headers.get` (a call through Deno's argument
   * checks) per variable.
   */
  fields?: readonly string[] | null;
  /** `$remote_addr`. */
  remoteAddr: string;
  /** `$remote_port`. */
  remotePort: number;
  /** `$server_addr`. */
  serverAddr: string;
  /** `$server_port`. */
  serverPort: number;
  /** `$server_name`: the chosen server's first name. */
  serverName: string;
  /** `$scheme`. */
  scheme: "http" | "https";
  /** `$server_protocol`: `HTTP/1.1`. */
  protocol: string;
  /** `$host`: the request line's host, else `Host` (no port, lower case), else `$server_name`. */
  host: string;
  /** `$proxy_host`, once a proxied location is chosen. */
  proxyHost: string;
  /** `$document_root` when no location is chosen yet. */
  documentRoot: string;
  /** `$request_filename` when no location is chosen yet. */
  requestFilename: string;
  /** The location chosen so far: `$document_root` and `$request_filename` map `$uri` in it. */
  location?: LocationConf;
  /**
   * `$remote_user` when the handler knows it; `""` reads it from
   * `Authorization: Basic` on first use (ngx_http_variable_remote_user
   * decodes the field whether or not `auth_basic` checked it).
   */
  remoteUser: string;
  /** The latest regex captures (`$1`…`$9`; `[0]` is the whole match). */
  captures: readonly string[];
  /** Named captures of the latest regex match. */
  named: Record<string, string>;
  /** `set` variables and named captures; made by the first of them. */
  vars?: Map<string, string> | undefined;
  /**
   * The map variables evaluated this request, flat: name, value, name,
   * value… A request reads a few (the built-in configuration's proxy
   * fields read two, its `Cache-Control` one): a scan of a short array
   * costs less than a `Map` or an object per request.
   */
  mapValues?: string[] | undefined;
}

/**
 * A field's value in a walked list (flat: name, value…), as
 * `Headers.get` gives it: `""` when absent, repeated ones joined with
 * ", " (the walk joins all but `Set-Cookie`, listed once per line).
 */
function fieldValue(fields: readonly string[], name: string): string {
  let value: string | null = null;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === name) {
      value = value === null ? fields[i + 1]! : `${value}, ${fields[i + 1]}`;
    }
  }
  return value ?? "";
}

/** `$http_NAME` for a variable's suffix (`user_agent` → `user-agent`). */
function fieldName(suffix: string): string {
  return suffix.replaceAll("_", "-");
}

function cookie(r: RequestVars, name: string): string {
  const header = r.headers.get("cookie");
  if (header === null) return "";
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return "";
}

function arg(r: RequestVars, name: string): string {
  if (r.args === "") return "";
  // ngx_http_arg: names compared without regard to case, value as sent.
  const lower = name.toLowerCase();
  for (const pair of r.args.split("&")) {
    const eq = pair.indexOf("=");
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (key.toLowerCase() === lower) return eq < 0 ? "" : pair.slice(eq + 1);
  }
  return "";
}

/**
 * nginx's `$hostname`: the machine's name, read once and in lower case
 * (`ngx_init_cycle`). Reading it needs `--allow-sys=hostname`, one of the
 * run flags; without it the name is empty rather than every request that
 * reads it a 500.
 */
let hostname: string | undefined;

function hostnameOnce(): string {
  try {
    return Deno.hostname().toLowerCase();
  } catch {
    return "";
  }
}

/** The readers of nginx's built-in variables by name. */
const BUILT_IN: Readonly<Record<string, VariableReader>> = {
  "request_method": (r) => r.method,
  "request_uri": (r) => r.requestUri,
  "uri": (r) => r.uri,
  "document_uri": (r) => r.uri,
  "args": (r) => r.args,
  "query_string": (r) => r.args,
  "is_args": (r) => r.args === "" ? "" : "?",
  // The `Host` field's name as read (or `$server_name`'s text, left as it is).
  "host": (r) => fieldText(r.host),
  "hostname": () => hostname ??= hostnameOnce(),
  "remote_addr": (r) => r.remoteAddr,
  "binary_remote_addr": (r) => r.remoteAddr,
  "remote_port": (r) => String(r.remotePort),
  // Values read from fields are their bytes as text (runtime/value_bytes.ts),
  // as every value variables hold.
  "remote_user": (r) =>
    fieldText(
      r.remoteUser !== ""
        ? r.remoteUser
        : parseBasicCredentials(r.headers.get("authorization"))?.user ?? "",
    ),
  "server_addr": (r) => r.serverAddr,
  "server_port": (r) => String(r.serverPort),
  "server_name": (r) => r.serverName,
  "server_protocol": (r) => r.protocol,
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
    r.location === undefined ? r.documentRoot : mapUri(r.location, r).root,
  "request_filename": (r) =>
    r.location === undefined ? r.requestFilename : mapUri(r.location, r).path,
  "content_type": (r) => fieldText(r.headers.get("content-type") ?? ""),
  "content_length": (r) => fieldText(r.headers.get("content-length") ?? ""),
  "request": (r) => `${r.method} ${r.requestUri} ${r.protocol}`,
  "nginx_version": () => "1.22.1",
  "pid": () => String(Deno.pid),
  "msec": () => (Date.now() / 1000).toFixed(3),
  // The gateway's own: the server each attempt goes to (request_head.ts).
  "station_peer": () => PEER_HOST_VALUE,
};

/**
 * The names known before any `set` or `map`: the built-in table and the
 * prefixes `http_`, `arg_`, `cookie_`.
 */
export class Variables implements VariableScope {
  #maps: ReadonlyMap<string, MapConf>;
  #set: ReadonlySet<string>;

  /**
   * @param maps The `map` variables.
   * @param set The names some `set` assigns (nginx registers them at parse time).
   */
  constructor(maps: ReadonlyMap<string, MapConf>, set: ReadonlySet<string>) {
    this.#maps = maps;
    this.#set = set;
  }

  /**
   * The reader for a name.
   *
   * @param name Lower case, without `$`.
   * @returns The reader, or `null` when nginx would not know the name.
   */
  reader(name: string): VariableReader | null {
    const map = this.#maps.get(name);
    if (map !== undefined) {
      // The map's memo, found once for the reader (not a lookup per request).
      let memo: Map<string, string> | null | undefined;
      return (r) => evaluateMap(name, map, r, memo ??= memoOf(map));
    }
    if (this.#set.has(name)) return (r) => r.vars?.get(name) ?? "";
    const builtIn = BUILT_IN[name];
    if (builtIn !== undefined) return builtIn;
    if (name.startsWith("http_")) {
      const field = fieldName(name.slice(5));
      // Cookie fields are joined with "; " by nginx, others with ", ";
      // Headers.get joins with ", " (a difference only for repeated Cookie).
      return (r) =>
        fieldText(
          r.fields ? fieldValue(r.fields, field) : r.headers.get(field) ?? "",
        );
    }
    if (name.startsWith("arg_")) {
      const key = name.slice(4);
      return (r) => arg(r, key);
    }
    if (name.startsWith("cookie_")) {
      const key = name.slice(7);
      return (r) => fieldText(cookie(r, key));
    }
    return null;
  }

  /**
   * Whether `set` may assign this name: not a built-in nginx keeps read-only.
   *
   * @param name Lower case, without `$`.
   * @returns `true` when it may.
   */
  static assignable(name: string): boolean {
    return BUILT_IN[name] === undefined && !name.startsWith("http_") &&
      !name.startsWith("arg_") && !name.startsWith("cookie_");
  }
}

/**
 * A `map` variable's value for a request: exact entries, then regexes in
 * order (captures become the value's `$1`…), then `default`
 * (`ngx_http_map_find`); a `geo` variable's, its table's value for the
 * address. Evaluated once per request.
 *
 * @param name The variable.
 * @param map The compiled block.
 * @param r The request.
 * @param memo The map's memo ({@linkcode memoOf}), when already found.
 * @returns The value.
 */
export function evaluateMap(
  name: string,
  map: MapConf,
  r: RequestVars,
  memo: Map<string, string> | null = memoOf(map),
): string {
  const known = r.mapValues;
  if (known !== undefined) {
    for (let i = 0; i < known.length; i += 2) {
      if (known[i] === name) return known[i + 1]!;
    }
  }
  const source = map.source.evaluate(r);
  if (map.geo !== undefined) {
    const forwarded = map.geo.forwardedFor?.evaluate(r) ?? "";
    const found = map.geo.lookup(source, forwarded);
    remember(r, name, found);
    return found;
  }
  let value = memo?.get(source);
  if (value === undefined) {
    value = lookUp(map, source, r);
    if (memo !== null) {
      if (memo.size >= MAP_MEMO_SIZE) memo.clear();
      memo.set(source, value);
    }
  }
  remember(r, name, value);
  return value;
}

/** Keeps a map's value for the rest of the request. */
function remember(r: RequestVars, name: string, value: string): void {
  if (r.mapValues === undefined) r.mapValues = [name, value];
  else r.mapValues.push(name, value);
}

/** Source values a map remembers the result of, at most (then it starts over). */
const MAP_MEMO_SIZE = 256;

/**
 * Each map whose result is its source's alone, with its results by source
 * value: the same few sources (`$uri` of the app's files, a client's
 * `Connection`) come with every request, so its regexes run once per
 * source, not per request. That is a map whose exact and default values
 * are text, and whose regex values are text and that regex's `$1`…`$9`
 * (an exact or default `$1` reads the request's own captures). `null` for
 * any other map.
 */
const memos = new WeakMap<MapConf, Map<string, string> | null>();

function memoOf(map: MapConf): Map<string, string> | null {
  let memo = memos.get(map);
  if (memo === undefined) {
    const pure = map.defaultValue.constant !== null &&
      [...map.exact.values()].every((v) => v.constant !== null) &&
      map.regexes.every((e) => textAndCaptures(e.value));
    memo = pure ? new Map() : null;
    memos.set(map, memo);
  }
  return memo;
}

/** A value of text and `$1`…`$9` only. */
function textAndCaptures(
  value: { text: string; constant: string | null },
): boolean {
  return value.constant !== null || /^[^$]*(?:\$[1-9][^$]*)*$/.test(value.text);
}

/** The map's value for a source (`ngx_http_map_find`). */
function lookUp(map: MapConf, source: string, r: RequestVars): string {
  const exact = map.exact.get(source);
  if (exact !== undefined) return exact.evaluate(r);
  for (const entry of map.regexes) {
    const m = entry.regex.exec(source);
    if (m === null) continue;
    const saved = r.captures;
    r.captures = [...m].map((c) => c ?? "");
    const value = entry.value.evaluate(r);
    r.captures = saved;
    return value;
  }
  return map.defaultValue.evaluate(r);
}
