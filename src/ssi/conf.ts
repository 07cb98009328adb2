/**
 * The settings of `ngx_http_ssi_filter_module` a location answers with.
 *
 * @module
 */

import type { VariableScope } from "../engine/mod.ts";

/** A location's SSI settings; a location with `ssi off` has none. */
export interface SsiConf {
  /** `ssi_types` (lower case; `text/html` always); `*` takes any. */
  types: ReadonlySet<string>;
  /** `ssi_silent_errors`: no error text in the body. */
  silentErrors: boolean;
  /** `ssi_last_modified`: keep `Last-Modified`, make the `ETag` weak. */
  lastModified: boolean;
  /** `ssi_value_length`: the longest parameter value. */
  valueLength: number;
  /** Resolves the variables `echo`, `set` and `if` read. */
  scope: VariableScope;
}
