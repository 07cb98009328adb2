/**
 * The configuration model every source compiles into, after nginx's http
 * configuration (`ngx_http_core_module`): an http level, servers chosen by
 * listen address and name, locations chosen by nginx's matching, and per
 * location the settings each phase reads, already merged with the levels
 * above (`merge_loc_conf`) so a request never walks the configuration.
 *
 * nginx.conf, the flags and the JSON config all build this one model: the
 * flags and JSON by writing nginx.conf text (`built_in.ts`), so there is one
 * compiler and `--print-config` can print any configuration as nginx.conf.
 *
 * Here are a location and a server; the parts they hold have files of their
 * own: `listen_model.ts` (listens and names), `proxy_model.ts`,
 * `response_model.ts` (headers, expires, gzip, error pages),
 * `upstream_model.ts`, and `http_model.ts` (the whole configuration).
 *
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";
import type { RewriteProgram } from "./rewrite_program.ts";
import type { FastcgiConf } from "./fastcgi_conf.ts";
import type { Referers } from "./referers.ts";
import type { Listen, ServerName } from "./listen_model.ts";
import type { CookieRewrite, ProxyPass, ProxyRedirect } from "./proxy_model.ts";
import type {
  AddHeader,
  ErrorPageTarget,
  Expires,
  GzipConf,
  GzipOkConf,
} from "./response_model.ts";
import type { ErrorTarget, LogFormat } from "../log/mod.ts";
import type { AccessList, AuthBasicConf } from "../access/mod.ts";
import type { LimitConnConf, LimitReqConf } from "../limits/mod.ts";
import type { FieldNames } from "../runtime/mod.ts";
import type { SsiConf } from "../ssi/mod.ts";
import type { NextUpstream } from "../upstream/mod.ts";

/** Where a directive came from, for messages: `/etc/nginx/nginx.conf:12`. */
export interface Place {
  /** The file. */
  file: string;
  /** The line. */
  line: number;
}

/** How a location is matched (`ngx_http_core_location`). */
export type LocationMatch =
  | "exact" // `=`
  | "prefix"
  | "prefix-no-regex" // `^~`
  | "regex" // `~`
  | "regex-caseless" // `~*`
  | "named" // `@name`
  | "if"; // the pseudo-location of an `if` block

/** `try_files`, compiled. */
export interface TryFiles {
  /** The names to test (`$uri`, `$uri/`, `/index.html`). */
  files: ComplexValue[];
  /** The last parameter: `=404` or an internal redirect (a URI or `@name`). */
  fallback: { kind: "code"; code: number } | {
    kind: "uri";
    uri: ComplexValue;
  };
}

/** An access log of a level (`access_log path [format] [if=…]`). */
export interface AccessLogConf {
  /** The file, absolute. */
  path: string;
  /** Its `log_format`. */
  format: LogFormat;
  /** `if=`: no line when it is empty or `0`; `null` when not given. */
  condition: ComplexValue | null;
}

/**
 * A location's settings, merged with every level above it. Arrays follow
 * nginx's rule: a level that sets the directive replaces the whole list.
 */
export interface LocationConf {
  /** How it matches. */
  match: LocationMatch;
  /** The name as written (`/api/`, `\.js$`, `@fallback`). */
  name: string;
  /** For `regex` matches. */
  regex: RegExp | null;
  /** Where it was written (`null` for a server's own level). */
  place: Place | null;
  /** Nested locations (and `if` pseudo-locations are not here). */
  locations: LocationIndex;
  /** `internal`: reached only by internal redirects. */
  internal: boolean;
  /** This level's rewrite-module directives (`rewrite`, `return`, `if`, `set`, `break`). */
  rewrite: RewriteProgram | null;
  // --- static content (ngx_http_static_module, index, try_files) ---
  /** `root`, a folder (absolute once the prefix is known). */
  root: ComplexValue;
  /** `alias`, or `null`. */
  alias: ComplexValue | null;
  /** `index` names, in order. */
  index: ComplexValue[];
  /** `try_files`, or `null`. */
  tryFiles: TryFiles | null;
  /** `log_not_found`. */
  logNotFound: boolean;
  /**
   * `underscores_in_headers` and `ignore_invalid_headers` (http and server
   * levels; a request reads its server's); absent at nginx's defaults.
   */
  fieldNames?: FieldNames;
  /**
   * `autoindex on`: a folder without an index file is listed (its
   * `autoindex_exact_size` and `autoindex_localtime`); absent when off.
   */
  autoindex?: { exactSize: boolean; localtime: boolean };
  /**
   * `stub_status`: the location's content is the connection and request
   * counts (ngx_http_stub_status_handler); absent when not set here (a
   * content handler is the location's own, never inherited).
   */
  stubStatus?: true;
  /** `types`: extension (lower case) → media type. */
  types: ReadonlyMap<string, string>;
  /** `default_type`. */
  defaultType: string;
  /** `charset`, or `null` (`off`). */
  charset: string | null;
  /** `charset_types`. */
  charsetTypes: ReadonlySet<string>;
  /** `add_header`, this level's list or the nearest parent's. */
  addHeaders: readonly AddHeader[];
  /** `expires`. */
  expires: Expires;
  /** `etag`. */
  etag: boolean;
  /**
   * `max_ranges`; absent for no limit. `0` answers no range and sends no
   * `Accept-Ranges` (ngx_http_range_header_filter); more ranges than it
   * allows get the whole file, as several ranges always do here.
   */
  maxRanges?: number | undefined;
  /** `valid_referers`, for `$invalid_referer`; absent when no level sets it. */
  referers?: Referers | undefined;
  /** `gzip_static`: `off`, `on` or `always`. */
  gzipStatic: "off" | "on" | "always";
  /**
   * `gzip_vary`: `Vary: Accept-Encoding` where `gzip_static` looked for a
   * `.gz` or the gzip filter took the response's type and length.
   */
  gzipVary: boolean;
  /** `gzip`, `gzip_comp_level`, `gzip_min_length`, `gzip_types`. */
  gzip: GzipConf;
  /** `gzip_http_version`, `gzip_proxied`, `gzip_disable`. */
  gzipOk: GzipOkConf;
  /** `ssi on` and its settings; absent under `ssi off`. */
  ssi?: SsiConf;
  /** `error_page`: status → target. */
  errorPages: ReadonlyMap<number, ErrorPageTarget>;
  /** `recursive_error_pages`. */
  recursiveErrorPages: boolean;
  /**
   * `station_error_page_fallback`: when an `error_page` file is missing
   * or refused (404, 403), the original error is answered with the built-in page (nginx answers
   * the page's 404). The built-in configuration's.
   */
  errorPageFallback: boolean;
  // --- proxy (ngx_http_proxy_module) ---
  /** `proxy_pass`, or `null` when the location does not proxy. */
  proxyPass: ProxyPass | null;
  /**
   * The fields sent upstream after the client's: nginx's defaults
   * (`Host: $proxy_host`, `Connection: close`) merged with
   * `proxy_set_header`; an empty value removes the field.
   */
  proxySetHeaders: readonly (readonly [string, ComplexValue])[];
  /** `proxy_http_version`. */
  proxyHttpVersion: "1.0" | "1.1";
  /**
   * `station_proxy_raw_uri`: the path goes upstream with the client's own
   * bytes (letter case and escapes) after the location's prefix, where
   * nginx sends the normalised `$uri` re-escaped. The built-in
   * configuration's.
   */
  proxyRawUri: boolean;
  /** `proxy_redirect`: `default` resolved against `proxy_pass`, `off` is empty. */
  proxyRedirect: readonly ProxyRedirect[];
  /** `proxy_cookie_domain`, the nearest level's; `off` is empty. */
  proxyCookieDomain: readonly CookieRewrite[];
  /** `proxy_cookie_path`, the nearest level's; `off` is empty. */
  proxyCookiePath: readonly CookieRewrite[];
  /** `proxy_hide_header` additions (lower case). */
  proxyHideHeaders: ReadonlySet<string>;
  /** `proxy_pass_header` (lower case). */
  proxyPassHeaders: ReadonlySet<string>;
  /**
   * `proxy_ignore_headers` (lower case): with `x-accel-redirect` an
   * upstream's `X-Accel-Redirect` is not followed.
   */
  proxyIgnoreHeaders: ReadonlySet<string>;
  /** `proxy_connect_timeout`, `proxy_send_timeout`, `proxy_read_timeout` in ms. */
  proxyTimeouts: { connectMs: number; sendMs: number; readMs: number };
  /** `proxy_buffer_size` in bytes: the largest upstream response head. */
  proxyBufferSize: number;
  /**
   * `proxy_buffering`: with `off`, each upstream read goes to the client at
   * once, through the gzip filter too (nginx flushes it with
   * `Z_SYNC_FLUSH`).
   */
  proxyBuffering: boolean;
  /** `proxy_intercept_errors`. */
  proxyInterceptErrors: boolean;
  /** `proxy_next_upstream`, `proxy_next_upstream_tries`, `proxy_next_upstream_timeout`. */
  proxyNextUpstream: NextUpstream;
  /** `fastcgi_pass` and its settings; absent where the location has none. */
  fastcgi?: FastcgiConf;
  /** `client_max_body_size` in bytes; 0 is unlimited. */
  clientMaxBodySize: number;
  /**
   * `station_default_page`: while the root folder does not exist, `/`
   * shows the gateway's own page (the built-in configuration's).
   */
  defaultPage: boolean;
  // --- access (ngx_http_access_module) ---
  /** `allow`/`deny`, the nearest level's list, or `null` when none. */
  accessRules: AccessList | null;
  /** `auth_basic` with `auth_basic_user_file`, or `null` when either is unset. */
  authBasic: AuthBasicConf | null;
  /** `satisfy`: how `allow`/`deny` and `auth_basic` combine. */
  satisfy: "all" | "any";
  // --- preaccess (ngx_http_limit_req_module, ngx_http_limit_conn_module) ---
  /** `limit_req` of the nearest level that has any, or `null`. */
  limitReq: LimitReqConf | null;
  /** `limit_conn` of the nearest level that has any, or `null`. */
  limitConn: LimitConnConf | null;
  // --- logs ---
  /** `access_log` of this level or the nearest parent's; empty is `off`. */
  accessLogs: readonly AccessLogConf[];
  /**
   * `error_log` of this level or the nearest parent's (the main level's at
   * the end): where lines about a request go while this level handles it.
   * Levels that inherit one list share the same array.
   */
  errorLogs: readonly ErrorTarget[];
}

/** The locations of one level, indexed for nginx's search. */
export interface LocationIndex {
  /** `=` locations by URI (lower case when matching is caseless). */
  exact: ReadonlyMap<string, LocationConf>;
  /** Prefix locations (`^~` too), longest first. */
  prefixes: readonly LocationConf[];
  /** Regex locations in file order. */
  regexes: readonly LocationConf[];
  /**
   * Per regex location, the file endings a `\.(js|css)$`-shaped one can
   * match (lower case for `~*`), `null` for any other shape: the search
   * skips such a location for a URI that ends in none of them without
   * running it (`locations.ts`).
   */
  regexEndings?: readonly (ReadonlySet<string> | null)[];
}

/** One `server {}`. */
export interface ServerConf {
  /** Its `listen`s (nginx's `*:80` when it has none). */
  listens: readonly Listen[];
  /** Its names in order; the first is `$server_name`. */
  names: readonly ServerName[];
  /** `$server_name`: the first name, `""` when none. */
  serverName: string;
  /** The server level's own settings, for a URI no location matches. */
  conf: LocationConf;
  /** `@name` locations. */
  named: ReadonlyMap<string, LocationConf>;
  /** Where it was written. */
  place: Place;
  /** Its certificate (`ssl_certificate`, inherited from http); none when absent. */
  ssl?: SslConf;
}

/**
 * A server's certificate and key (`ssl_certificate`,
 * `ssl_certificate_key`), loaded at start as nginx loads them for every
 * server that names one, whether or not it listens with `ssl`.
 */
export interface SslConf {
  /** `ssl_certificate`, absolute. */
  certificate: string;
  /** `ssl_certificate_key`, absolute. */
  certificateKey: string;
  /** Where `ssl_certificate` was written. */
  place: Place;
  /** The PEM texts, once the files are read (`null` until then). */
  pem: { cert: string; key: string } | null;
}
