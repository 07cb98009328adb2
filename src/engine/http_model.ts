/**
 * The http level of the configuration model (`model.ts`): the whole
 * configuration, its servers, upstream groups, `map` and `geo` variables and
 * logs, as a request and the start read it.
 *
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";
import type { HostnameWildcards } from "./hostname_keys.ts";
import type { ServerConf } from "./model.ts";
import type { UpstreamConf } from "./upstream_model.ts";
import type { ErrorTarget, LogFormat, LogLevel } from "../log/mod.ts";

/** A `map` block, compiled. */
export interface MapConf {
  /** The source value (`$http_upgrade`). */
  source: ComplexValue;
  /**
   * Exact entries, lower case: ngx_hash_add_key lowercases a map's keys
   * and ngx_http_map_find the source value, so they match in any case.
   */
  exact: ReadonlyMap<string, ComplexValue>;
  /**
   * `hostnames`: the wildcard keys (`*.example.com`, `.example.com`,
   * `www.example.*`), looked up after the exact ones, and the source's
   * trailing dot set aside (ngx_http_map_variable); absent without it.
   */
  wildcards?: HostnameWildcards<ComplexValue>;
  /**
   * Regex entries in order; a match sets the request's `$1`…`$9` and
   * named captures, as ngx_http_regex_exec does (a regex without groups
   * leaves them).
   */
  regexes: readonly { regex: RegExp; value: ComplexValue }[];
  /** `default`. */
  defaultValue: ComplexValue;
  /**
   * A `geo` block instead of entries (`ngx_http_geo_module`): the value for
   * the source address, given `X-Forwarded-For` when the block has `proxy`
   * networks (`forwardedFor` reads it; `null` otherwise). A
   * `split_clients` block too: its lookup hashes the source
   * (ngx_http_split_clients_variable).
   */
  geo?: {
    lookup(address: string, forwardedFor: string): string;
    forwardedFor: ComplexValue | null;
  };
  /**
   * A `geo` block whose one entry is `default VALUE`: that value, the same
   * for every request, taken as written (geo values are not variables).
   * nginx's idiom for a literal `$` in a value that reads variables
   * (`geo $dollar { default "$"; }`, then `${dollar}`); a path folds it in
   * when the configuration is compiled (`VariableScope.constant`).
   */
  fixed?: string;
}

/** A whole configuration. */
export interface HttpConf {
  /** Servers in file order. */
  servers: readonly ServerConf[];
  /** Upstream groups by name (explicit and implicit). */
  upstreams: ReadonlyMap<string, UpstreamConf>;
  /**
   * The groups `fastcgi_pass` names (an `upstream{}`'s, or one made for a
   * `host:port`), by name; absent when nothing passes to FastCGI.
   */
  fastcgiUpstreams?: ReadonlyMap<string, UpstreamConf>;
  /** `map` variables by name (without `$`). */
  maps: ReadonlyMap<string, MapConf>;
  /** `log_format`s by name (`combined` always). */
  logFormats: ReadonlyMap<string, LogFormat>;
  /**
   * The access log every level writes (one for the whole configuration):
   * its file, absolute, or `null` for `off`, and its format.
   */
  accessLog: { path: string | null; format: LogFormat };
  /**
   * Every access log file any level writes, absolute, first seen first:
   * each is opened once at start.
   */
  accessLogFiles: readonly string[];
  /** Some access log's format reads request or response fields beyond `combined`'s. */
  accessNeedsFields: boolean;
  /**
   * Some access log's format or `if=` reads the request's fields when its
   * line is written (`$http_NAME` beyond `combined`'s, `$cookie_NAME`, a
   * `map` on one): only then does a request keep a copy of them.
   */
  accessCopiesFields: boolean;
  /**
   * Some access log's format or `if=` names `$request_length`: only then
   * does a request keep its field lines and count its body's bytes.
   */
  accessCountsRequest: boolean;
  /**
   * Some access log's format or `if=` names `$content_length`: a chunked
   * body the request did not read is discarded before its line, for the
   * value nginx gives it then.
   */
  accessDiscardsBody: boolean;
  /**
   * The main level's first `error_log` file, absolute, and its level: where
   * the start's `[emerg]` lines go, and the file the built-in page names.
   */
  errorLog: { path: string; level: string };
  /**
   * The main level's `error_log` list (nginx's default `logs/error.log`
   * at `error` when it has none): lines about no request go there.
   */
  errorLogs: readonly ErrorTarget[];
  /**
   * Every error log file any level writes, absolute (`stderr` as is),
   * first seen first: each is opened once at start.
   */
  errorLogFiles: readonly string[];
  /**
   * The least severe level any error log takes: a line less severe than
   * this goes nowhere, so it need not be looked for.
   */
  errorLogFloor: LogLevel;
  /** Compare URIs with locations without regard to case (nginx for Windows). */
  caseless: boolean;
  /** `station_status`: the status endpoint's path (loopback only), or `null`. */
  statusPath: string | null;
  /** The nginx prefix relative paths start from. */
  prefix: string;
}
