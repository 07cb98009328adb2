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

/**
 * The folder a location's file must stay inside (**links-outside**): the
 * folder its `root` or `alias` names before any variable. What a variable
 * brings may be a client's (a capture, numbered or named; a `set` variable
 * made of one), and a `..` or a link in it must not climb out:
 *
 * - without variables, the `root` or `alias` itself; a regex location's
 *   `alias` without variables names the file, so its folder;
 * - with variables, the text before the first one (`alias /srv/w$1`: `/srv/w`;
 *   `alias /srv/w/$p`: `/srv/w/`; `alias /srv/$1/x/$2`: `/srv/`), a folder
 *   as an `alias` without variables is one (`alias /srv/w/img_$1` keeps its
 *   files in a folder `/srv/w/img_`, as `location /i/ { alias /srv/w/img_; }`
 *   does); a value that begins with a variable, that variable and the text
 *   after it (`root $base/$host`: `$base/`).
 *
 * Relative paths count from the prefix, as the value's; `..` in the text is
 * resolved where the proof measures the path (`node:path` `relative`).
 *
 * @param conf The location.
 * @param vars The request.
 * @param root The root {@linkcode mapUri} gave.
 * @returns The folder.
 */
export function containmentRoot(
  conf: LocationConf,
  vars: RequestVars,
  root: string,
): string {
  const value = conf.alias ?? conf.root;
  // A constant `root` (the common path) is the folder as it is.
  if (value.constant !== null) {
    if (conf.alias === null || conf.regex === null) return root;
    const slash = Math.max(root.lastIndexOf("/"), root.lastIndexOf("\\"));
    return slash > 0 ? root.slice(0, slash) : root;
  }
  return value.folder === undefined ? root : value.folder.evaluate(vars);
}
