/**
 * Where a URI is on disk in a location (`ngx_http_map_uri_to_path`): `root`
 * followed by the URI, or the `alias` folder in place of the location's
 * prefix. `$document_root` and `$request_filename` read it.
 *
 * @module
 */

import type { LocationConf } from "./model.ts";
import type { RequestVars } from "./variables.ts";

/**
 * The document root and the file a URI names in a location: `root` + URI,
 * or for `alias` the alias with the location's prefix replaced.
 *
 * @param conf The location.
 * @param vars The request (`$uri`; root and alias may read variables).
 * @param uri The URI to map (defaults to `$uri`).
 * @returns The folder and the path.
 */
export function mapUri(
  conf: LocationConf,
  vars: RequestVars,
  uri: string = vars.uri,
): { root: string; path: string } {
  if (conf.alias !== null) {
    const alias = conf.alias.evaluate(vars);
    // A regex location's alias is the whole path (captures build it).
    if (conf.regex !== null) return { root: alias, path: alias };
    const rest = uri.slice(conf.name.length);
    return { root: alias, path: alias + rest };
  }
  const root = conf.root.evaluate(vars);
  return { root, path: root + uri };
}
