/**
 * nginx's variables (`ngx_http_variables.c`, and the proxy, upstream and
 * rewrite modules' own): what each request exposes to compiled values, and
 * the readers a configuration resolves names to once. Values are computed
 * on first read; most requests read none.
 *
 * @module
 */

import {
  variableNames,
  type VariableReader,
  type VariableScope,
} from "./complex_value.ts";
import type { LocationConf } from "./model.ts";
import type { MapConf } from "./http_model.ts";
import { evaluateMap, type MapResult, memoOf } from "./map_eval.ts";

export { evaluateMap };
import {
  type LogRecord,
  type LogVariable,
  type LogVariableScope,
  recordValue,
} from "../log/mod.ts";
import {
  arg,
  CHANGEABLE,
  cookie,
  fieldName,
  fieldValue,
  READS_FIELDS,
  VARIABLES,
} from "./built_in_variables.ts";
import { upstreamCookie, upstreamField } from "./other_variables.ts";
import {
  fieldBytes,
  type FieldNames,
  fieldText,
  firstLine,
  keepsUnderscores,
  underscoredField,
} from "../runtime/mod.ts";

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
  /**
   * Whether an empty `$args` is there, once an internal redirect set them:
   * `true` after `try_files`' last name without `?`, `false` after a
   * constant error page's; `undefined` until then, when it is there only
   * if the target had a `?`.
   */
  argsSet?: boolean | undefined;
  /** The request's header fields. */
  headers: Headers;
  /**
   * The same fields as the head's check walked them (flat: name, value…,
   * in `Headers.forEach`'s order), when they are `headers`' own: `$http_*`
   * reads them without a `Headers.get` (a call through Deno's argument
   * checks) per variable.
   */
  fields?: readonly string[] | null;
  /**
   * The server's `underscores_in_headers` and `ignore_invalid_headers`:
   * which of `headers` nginx keeps. Absent at nginx's defaults.
   */
  fieldNames?: FieldNames | undefined;
  /**
   * The length of a body read whole that came without `Content-Length`
   * (chunked), once read: `$content_length` then.
   */
  bodyLength?: number | undefined;
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
  /**
   * How much of a request refused at its line nginx had read: `line`,
   * none of it (no method, URI, arguments or protocol); `target`, all but
   * its target (`$uri` empty, no `$request_uri` or `$args`).
   */
  unparsed?: "line" | "target" | undefined;
  /** `$request_id` once read (16 random bytes in hex). */
  requestId?: string | undefined;
  /**
   * The response's fields while the headers filter reads a value with
   * variables (`expires $expires`): `$sent_http_NAME` reads them before
   * the access line's record exists, as nginx's header filter sees
   * `r->headers_out`.
   */
  sentFields?: { get(name: string): string | null } | undefined;
  /**
   * The finished request's record, set when its access line is written:
   * the variables of the log phase (`$status`, `$upstream_*`,
   * `$sent_http_*`, …) read it, so a `map` on them, and `if=`, see the
   * values nginx's log phase sees.
   */
  log?: LogRecord | undefined;
}

/**
 * The names known before any `set` or `map`: the built-in table, the
 * prefixes `http_`, `arg_`, `cookie_`, and the variables of the log phase.
 * The one resolution of a name for every directive that takes variables,
 * `log_format` included ({@linkcode Variables.variable}).
 */
export class Variables implements VariableScope, LogVariableScope {
  #maps: ReadonlyMap<string, MapConf>;
  #set: ReadonlySet<string>;
  #captures: ReadonlySet<string>;

  /**
   * @param maps The `map` variables.
   * @param set The names some `set` assigns (nginx registers them at parse time).
   * @param captures The names of regexes' named captures (`(?<name>…)`),
   * read from the request's own table like `set` ones.
   */
  constructor(
    maps: ReadonlyMap<string, MapConf>,
    set: ReadonlySet<string>,
    captures: ReadonlySet<string> = new Set(),
  ) {
    this.#maps = maps;
    this.#set = set;
    this.#captures = captures;
  }

  /**
   * The value of a name that is the same for every request: a `geo` whose
   * one entry is `default` (its value is text, ngx_http_geo), unless a
   * `set` or a named capture can change it for a request.
   *
   * @param name Lower case, without `$`.
   * @returns The value, or `null`.
   */
  constant(name: string): string | null {
    const fixed = this.#maps.get(name)?.fixed;
    if (fixed === undefined) return null;
    return this.#set.has(name) || this.#captures.has(name) ? null : fixed;
  }

  /**
   * The reader for a name, one for each name: a value reads `undefined`
   * (nginx's `not_found`) as empty, a log line as `-`.
   *
   * @param name Lower case, without `$`.
   * @returns The reader, or `null` when nginx would not know the name.
   */
  reader(name: string): VariableReader | null {
    const map = this.#maps.get(name);
    if (map !== undefined) {
      // The map's memo, found once for the reader (not a lookup per request).
      let memo: Map<string, MapResult> | null | undefined;
      return (r) => evaluateMap(name, map, r, memo ??= memoOf(map));
    }
    if (this.#set.has(name)) return (r) => r.vars?.get(name) ?? "";
    // A named capture of a regex that did not match is not found; a `set`
    // variable not yet assigned is empty.
    if (this.#captures.has(name)) return (r) => r.vars?.get(name);
    const known = VARIABLES[name];
    if (known !== undefined) return known;
    if (name.startsWith("http_")) {
      const suffix = name.slice(5);
      const field = fieldName(suffix);
      // Deno.serve joins repeated HTTP/1.1 Cookie fields with "; ", as
      // nginx's $http_cookie does.
      // A field the request does not have is not found
      // (ngx_http_variable_unknown_header): a value reads it as empty, SSI's
      // `echo` as `(none)`.
      const read = (r: RequestVars) => {
        // A field on several lines reads its first (nginx 1.22's
        // ngx_http_variable_unknown_header; Cookie and X-Forwarded-For
        // joined).
        const value = firstLine(
          r.headers,
          field,
          r.fields ? fieldValue(r.fields, field) : r.headers.get(field) ?? "",
        )!;
        if (value !== "") return fieldText(value);
        return (r.fields ? hasField(r.fields, field) : r.headers.has(field))
          ? ""
          : undefined;
      };
      if (field === suffix) return read;
      // `$http_x_token` reads a field `x_token` too where such fields are
      // kept; the name with `-` is looked up first, all there is to it at
      // nginx's defaults.
      return (r) => {
        const value = read(r);
        if (value !== undefined || !keepsUnderscores(r.fieldNames)) {
          return value;
        }
        const kept = underscoredField(
          r.fields ?? r.headers,
          suffix,
          r.fieldNames,
        );
        return kept === null ? undefined : fieldText(kept);
      };
    }
    if (name.startsWith("arg_")) {
      const key = name.slice(4);
      return (r) => arg(r, key);
    }
    if (name.startsWith("cookie_")) {
      const key = name.slice(7);
      return (r) => cookie(r, key);
    }
    if (name.startsWith("upstream_http_")) {
      const key = fieldName(name.slice(14));
      return (r) => upstreamField(r, key);
    }
    if (name.startsWith("upstream_cookie_")) {
      const key = name.slice(16);
      return (r) => upstreamCookie(r, key);
    }
    // No trailers are sent or kept.
    if (
      name.startsWith("sent_trailer_") || name.startsWith("upstream_trailer_")
    ) {
      return () => undefined;
    }
    const logged = recordValue(name);
    if (logged !== null && name.startsWith("sent_http_")) {
      const field = name.slice(10).replaceAll("_", "-");
      return (r) => {
        if (r.log !== undefined) return fieldText(logged(r.log) ?? "");
        const value = r.sentFields?.get(field);
        return value === undefined ? "" : fieldText(value ?? "");
      };
    }
    if (logged !== null) {
      // The log phase's values (ngx_http_variable_status, the upstream
      // module's): what the finished request tells, empty before it is.
      return (r) => r.log === undefined ? "" : fieldText(logged(r.log) ?? "");
    }
    return null;
  }

  /**
   * A name as `log_format` reads it (the names the log module does not
   * know itself): the same reader over the request's variables, which the
   * line's record carries; `undefined` (`-` in the line) when nginx finds
   * no value. The value's bytes are what the variable holds
   * (runtime/value_bytes.ts), escaped as the format says.
   *
   * @param name Lower case, without `$`.
   * @returns The variable, or `null` when nginx would not know the name.
   *
   * @example Usage
   * ```ts
   * import { Variables } from "./variables.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const scope = new Variables(new Map(), new Set());
   * strictEqual(scope.variable("no_such_thing"), null);
   * strictEqual(scope.variable("uri")?.encoding, "latin1");
   * ```
   */
  variable(name: string): LogVariable | null {
    const read = this.reader(name);
    if (read === null) return null;
    return {
      readsFields: this.readsFields(name),
      read: (record) => {
        const vars = record.vars as RequestVars | undefined;
        if (vars === undefined) return undefined;
        const value = read(vars);
        return value === undefined ? undefined : fieldBytes(value);
      },
      encoding: "latin1",
    };
  }

  /**
   * Whether reading a name when the access line is written may read the
   * request's fields (`$http_NAME`, `$cookie_NAME`, `$content_type`, a
   * `map` on one), which Deno's request no longer gives once the exchange
   * is over: decided at load, so a request keeps a copy of its fields only
   * when a log needs it. A `set` variable or a capture holds a value made
   * before; a `map` is followed to its source and values.
   *
   * @param name Lower case, without `$`.
   * @param seen The maps followed so far (a map naming itself ends there).
   * @returns `true` when it may.
   */
  readsFields(name: string, seen: Set<string> = new Set()): boolean {
    const map = this.#maps.get(name);
    if (map !== undefined) {
      if (seen.has(name)) return false;
      seen.add(name);
      const values = [
        map.source,
        map.defaultValue,
        ...map.exact.values(),
        ...map.regexes.map((e) => e.value),
        ...(map.wildcards?.leading ?? []).map((e) => e.value),
        ...(map.wildcards?.trailing ?? []).map((e) => e.value),
        ...(map.geo?.forwardedFor ? [map.geo.forwardedFor] : []),
      ];
      return values.some((v) => this.valueReadsFields(v.text, seen));
    }
    if (this.#set.has(name) || this.#captures.has(name)) return false;
    if (VARIABLES[name] !== undefined) return READS_FIELDS.has(name);
    return name.startsWith("http_") || name.startsWith("cookie_");
  }

  /**
   * Whether a value's variables may read the request's fields
   * ({@linkcode Variables.readsFields}).
   *
   * @param text The value as written.
   * @param seen The maps followed so far.
   * @returns `true` when one may.
   */
  valueReadsFields(text: string, seen: Set<string> = new Set()): boolean {
    return variableNames(text).some((n) => this.readsFields(n, seen));
  }

  /**
   * Why `set` (or a regex's named capture) may not take a name, as
   * `ngx_http_add_variable` refuses a variable nginx keeps read-only (every
   * one but `NGX_HTTP_VAR_CHANGEABLE` ones; a prefix such as `http_` is no
   * variable of its own there, but `http_host` and the others the core
   * names are).
   *
   * @param name The name as written, without `$`.
   * @returns nginx's message, the gateway's for a changeable variable
   * whose own handler it lacks, or `null` when `set` may assign it.
   *
   * @example Usage
   * ```ts
   * import { Variables } from "./variables.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * strictEqual(Variables.assignRefusal("Remote_Addr"), 'the duplicate "Remote_Addr" variable');
   * strictEqual(Variables.assignRefusal("ssl_protocol"), null);
   * strictEqual(Variables.assignRefusal("http_x"), null);
   * ```
   */
  static assignRefusal(name: string): string | null {
    const key = name.toLowerCase();
    const changeable = CHANGEABLE[key];
    if (changeable !== undefined) {
      return changeable === null
        ? null
        : `"set $${name}" is not supported: ${changeable}`;
    }
    const builtIn = VARIABLES[key] !== undefined || NAMED_FIELDS.has(key) ||
      (recordValue(key) !== null && !/^(?:sent_)?http_/.test(key));
    return builtIn ? `the duplicate "${name}" variable` : null;
  }
}

/**
 * The field variables nginx's core registers by name
 * (ngx_http_core_variables; Debian's build has `http_via` and
 * `http_x_forwarded_for`): read-only like the other variables, where the
 * rest of `http_` and `sent_http_` is a prefix.
 */
const NAMED_FIELDS = new Set([
  "http_host",
  "http_user_agent",
  "http_referer",
  "http_via",
  "http_x_forwarded_for",
  "http_cookie",
  "sent_http_content_type",
  "sent_http_content_length",
  "sent_http_location",
  "sent_http_last_modified",
  "sent_http_connection",
  "sent_http_keep_alive",
  "sent_http_transfer_encoding",
  "sent_http_cache_control",
  "sent_http_link",
]);

/** Whether a flat field list (name, value, …) has a field of a name. */
function hasField(fields: readonly string[], name: string): boolean {
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === name) return true;
  }
  return false;
}
