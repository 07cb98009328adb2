/**
 * The settings a location applies to its responses, in the configuration
 * model (`model.ts`): `add_header`, `expires`, the gzip filter's and
 * `ngx_http_gzip_ok`'s settings, `error_page` targets.
 *
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";

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
  | { kind: "daily"; secondsOfDay: number }
  // A value with variables, read for each response as
  // ngx_http_set_expires reads `expires_value`: `modified` when written
  // `expires modified $x`.
  | { kind: "variable"; value: ComplexValue; modified: boolean };

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
