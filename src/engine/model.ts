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
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";
import type { RewriteProgram } from "./rewrite.ts";
import type { FastcgiConf } from "./fastcgi_conf.ts";
import type { ErrorTarget, LogFormat, LogLevel } from "../log/mod.ts";
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

/** One `listen` of a server. */
export interface Listen {
  /** The address to bind (`0.0.0.0`, `::`, `127.0.0.1`). */
  hostname: string;
  /** The port. */
  port: number;
  /** `default_server`: answers names no server on this address claims. */
  defaultServer: boolean;
  /** `ssl`. */
  ssl: boolean;
  /** `http2`. */
  http2: boolean;
  /** The text as written, for messages. */
  text: string;
}

/** A `server_name`, classified as `ngx_http_server_names` does. */
export type ServerName =
  | { kind: "exact"; name: string }
  | { kind: "leading"; suffix: string } // `*.example.com` or `.example.com`
  | { kind: "trailing"; prefix: string } // `www.example.*`
  | { kind: "regex"; regex: RegExp; text: string };

/** How a location is matched (`ngx_http_core_location`). */
export type LocationMatch =
  | "exact" // `=`
  | "prefix"
  | "prefix-no-regex" // `^~`
  | "regex" // `~`
  | "regex-caseless" // `~*`
  | "named" // `@name`
  | "if"; // the pseudo-location of an `if` block

/** The upstream URL of `proxy_pass`, compiled. */
export interface ProxyPass {
  /** `http` (https upstreams are refused for now). */
  scheme: "http";
  /**
   * The `upstream{}` name, or the implicit group of one `host:port`
   * (nginx: `ngx_http_upstream_add` makes one per distinct address); empty
   * when `url` is set.
   */
  group: string;
  /** `$proxy_host`: the host and port as written (`127.0.0.1:8080`, `backend`). */
  proxyHost: string;
  /**
   * The URI part (`/`, `/v1/`), or `null` when `proxy_pass` has none: then
   * the request URI goes as the client sent it (or as rewritten).
   */
  uri: string | null;
  /** `proxy_pass` with variables: evaluated per request (no URI rule). */
  dynamic: ComplexValue | null;
  /**
   * `proxy_pass` with variables in its host or port: the whole URL,
   * evaluated per request and read then (`ngx_http_proxy_eval`); the group
   * is the one it names (proxy/proxy_url.ts).
   */
  url: ComplexValue | null;
  /** The text as written, for `proxy_redirect default` and messages. */
  text: string;
}

/** One `proxy_redirect` pair. */
export type ProxyRedirect =
  | { kind: "text"; from: ComplexValue; to: ComplexValue }
  | { kind: "regex"; regex: RegExp; to: ComplexValue };

/**
 * One `proxy_cookie_domain` or `proxy_cookie_path` pair. A text pair
 * matches a domain whole without regard to case (leading dots aside), a
 * path as a case-sensitive prefix; a regex pair (`~`, `~*` for paths)
 * replaces the whole value, captures available.
 */
export type CookieRewrite =
  | { kind: "text"; from: ComplexValue; to: ComplexValue }
  | { kind: "regex"; regex: RegExp; to: ComplexValue };

/** One `add_header`. */
export interface AddHeader {
  /** The field name as written. */
  name: string;
  /** Its value. */
  value: ComplexValue;
  /** `always`: for every status, not only nginx's list. */
  always: boolean;
}

/** `expires`, compiled. */
export type Expires =
  | { kind: "off" }
  | { kind: "epoch" }
  | { kind: "max" }
  | { kind: "after"; seconds: number; modified: boolean }
  | { kind: "daily"; secondsOfDay: number };

/** A `gzip_proxied` flag (`ngx_http_gzip_proxied_mask`). */
export type GzipProxied =
  | "off"
  | "expired"
  | "no-cache"
  | "no-store"
  | "private"
  | "no_last_modified"
  | "no_etag"
  | "auth"
  | "any";

/**
 * What `ngx_http_gzip_ok` reads (the core module's `gzip_*` settings),
 * asked by the gzip filter and by `gzip_static`.
 */
export interface GzipOkConf {
  /** `gzip_http_version`: the oldest request version that gets gzip. */
  httpVersion: "1.0" | "1.1";
  /** `gzip_proxied`: when a request with `Via` gets gzip. */
  proxied: ReadonlySet<GzipProxied>;
  /** `gzip_disable` regexes (caseless), tested on `User-Agent`. */
  disable: readonly RegExp[];
  /** `gzip_disable msie6`. */
  disableMsie6: boolean;
}

/** The gzip filter's settings (`ngx_http_gzip_filter_module`). */
export interface GzipConf {
  /** `gzip`. */
  enabled: boolean;
  /** `gzip_comp_level`, 1 to 9. */
  level: number;
  /** `gzip_min_length` in bytes, tested on a known `Content-Length`. */
  minLength: number;
  /** `gzip_types` (lower case; `text/html` always); `*` takes any. */
  types: ReadonlySet<string>;
}

/** An `error_page` target. */
export interface ErrorPageTarget {
  /** The URI, `@name`, or an absolute URL (a redirect). */
  uri: ComplexValue;
  /** `=code`: the status to answer with; `null` keeps the error's, `0` (`=`) takes the target's. */
  overwrite: number | null;
}

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
   * `station_error_page_fallback`: when an `error_page` file is missing,
   * the original error is answered with the built-in page (nginx answers
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

/** One server of an `upstream{}` (or the one of a `proxy_pass host:port`). */
export interface UpstreamServerConf {
  /** `host:port` as written. */
  address: string;
  /** The host. */
  hostname: string;
  /** The port. */
  port: number;
  /** `weight=`. */
  weight: number;
  /** `max_fails=`. */
  maxFails: number;
  /** `fail_timeout=` in ms. */
  failTimeoutMs: number;
  /** `backup`. */
  backup: boolean;
  /** `down`. */
  down: boolean;
  /** The address as written (`hash … consistent` hashes it); `address` when absent. */
  server?: string;
}

/**
 * nginx's `server` parameters when none is written (ngx_http_upstream_server:
 * `weight=1 max_fails=1 fail_timeout=10`), for every server the gateway
 * makes: an `upstream{}` line, a `proxy_pass host:port`, a variable's
 * address.
 */
export const SERVER_DEFAULTS: Readonly<
  Pick<
    UpstreamServerConf,
    "weight" | "maxFails" | "failTimeoutMs" | "backup" | "down"
  >
> = {
  weight: 1,
  maxFails: 1,
  failTimeoutMs: 10_000,
  backup: false,
  down: false,
};

/** An `upstream{}` block, or an implicit one. */
export interface UpstreamConf {
  /** The name (`backend`, or `127.0.0.1:8080` for an implicit one). */
  name: string;
  /** Its servers. */
  servers: readonly UpstreamServerConf[];
  /** `keepalive N`: idle connections kept per server; 0 closes each. */
  keepalive: number;
  /** Declared by `upstream{}` rather than made for a `proxy_pass`. */
  explicit: boolean;
  /**
   * `ip_hash`, `least_conn`, `hash KEY` (`hash`), `hash KEY consistent`
   * (`consistent-hash`), or nginx's default weighted round-robin;
   * round-robin when absent.
   */
  balance?:
    | "round-robin"
    | "ip-hash"
    | "least-conn"
    | "hash"
    | "consistent-hash";
  /** The key of `hash`. */
  hashKey?: ComplexValue;
}

/** A `map` block, compiled. */
export interface MapConf {
  /** The source value (`$http_upgrade`). */
  source: ComplexValue;
  /** Exact entries (lower case when `hostnames`... kept simple: exact as written). */
  exact: ReadonlyMap<string, ComplexValue>;
  /** Regex entries in order. */
  regexes: readonly { regex: RegExp; value: ComplexValue }[];
  /** `default`. */
  defaultValue: ComplexValue;
  /**
   * A `geo` block instead of entries (`ngx_http_geo_module`): the value for
   * the source address, given `X-Forwarded-For` when the block has `proxy`
   * networks (`forwardedFor` reads it; `null` otherwise).
   */
  geo?: {
    lookup(address: string, forwardedFor: string): string;
    forwardedFor: ComplexValue | null;
  };
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
