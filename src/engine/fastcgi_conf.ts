/**
 * A location's `ngx_http_fastcgi_module` settings as the FastCGI content
 * handler (`fastcgi/`) and the `$fastcgi_script_name` and
 * `$fastcgi_path_info` variables read them.
 *
 * @module
 */

import type { ComplexValue } from "./complex_value.ts";
import type { NextUpstream } from "../upstream/mod.ts";

/** One `fastcgi_param NAME VALUE [if_not_empty]`. */
export interface FastcgiParam {
  /** The parameter's name, as written. */
  name: string;
  /** The value, evaluated per request. */
  value: ComplexValue;
  /** `if_not_empty`: left out when the value is empty. */
  ifNotEmpty: boolean;
}

/** A location's FastCGI settings, present where `fastcgi_pass` is set. */
export interface FastcgiConf {
  /** The upstream group's name: an `upstream{}` name or `host:port`. */
  group: string;
  /** `fastcgi_param`, this level's list or the nearest parent's. */
  params: readonly FastcgiParam[];
  /**
   * The client fields an `HTTP_*` parameter replaces: lower case, `-` as
   * `_`, without `HTTP_` (nginx's `params->hash`).
   */
  hiddenFields: ReadonlySet<string>;
  /** `fastcgi_pass_request_headers`. */
  passRequestHeaders: boolean;
  /** `fastcgi_pass_request_body`. */
  passRequestBody: boolean;
  /** `fastcgi_index`: added to `$fastcgi_script_name` ending in `/`. */
  index: string;
  /** `fastcgi_split_path_info`: two captures, script name and path info. */
  split: RegExp | null;
  /** `fastcgi_intercept_errors`. */
  interceptErrors: boolean;
  /** `fastcgi_next_upstream`, `fastcgi_next_upstream_tries`, `fastcgi_next_upstream_timeout`. */
  nextUpstream: NextUpstream;
  /** `fastcgi_connect_timeout`, `fastcgi_send_timeout`, `fastcgi_read_timeout` in ms. */
  timeouts: { connectMs: number; sendMs: number; readMs: number };
  /** `fastcgi_buffer_size`: the most the response head may take. */
  bufferSize: number;
  /** The reply's fields not relayed: nginx's defaults and `fastcgi_hide_header`, less `fastcgi_pass_header` (lower case). */
  hideHeaders: ReadonlySet<string>;
  /** `fastcgi_ignore_headers` (lower case): `x-accel-redirect` is then not followed. */
  ignoreHeaders: ReadonlySet<string>;
  /** `fastcgi_keep_conn` (the connection is closed after each request either way). */
  keepConn: boolean;
}

/** The split of `$uri` into script name and path info. */
export interface FastcgiSplit {
  /** `$fastcgi_script_name`, before `fastcgi_index` is added. */
  scriptName: string;
  /** `$fastcgi_path_info`. */
  pathInfo: string;
}

/**
 * `$fastcgi_script_name` and `$fastcgi_path_info` of a URI under a
 * location's settings (`ngx_http_fastcgi_split`,
 * `ngx_http_fastcgi_script_name_variable`): the split's two captures
 * when it matches, else the whole URI; `fastcgi_index` added to a script
 * name that ends in `/`.
 *
 * @param uri `$uri`.
 * @param conf The location's settings, or none (no `fastcgi_pass` there).
 * @returns The two values.
 *
 * @example Usage
 * ```ts
 * import { fastcgiSplit } from "./fastcgi_conf.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(
 *   fastcgiSplit("/a.php/x/y", { split: /^(.+\.php)(.*)$/, index: "index.php" }),
 *   { scriptName: "/a.php", pathInfo: "/x/y" },
 * );
 * deepStrictEqual(
 *   fastcgiSplit("/dir/", { split: null, index: "index.php" }),
 *   { scriptName: "/dir/index.php", pathInfo: "" },
 * );
 * ```
 */
export function fastcgiSplit(
  uri: string,
  conf: Pick<FastcgiConf, "split" | "index"> | undefined,
): FastcgiSplit {
  let scriptName = uri;
  let pathInfo = "";
  const match = conf?.split?.exec(uri);
  if (match) {
    scriptName = match[1] ?? "";
    pathInfo = match[2] ?? "";
  }
  if (scriptName.endsWith("/") && conf !== undefined) {
    scriptName += conf.index;
  }
  return { scriptName, pathInfo };
}
