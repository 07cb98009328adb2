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
 * The folder a location's file must stay inside: its root, or for a regex
 * location's `alias` (the captures build the whole path) the alias as it
 * reads without its captures, up to its last slash: the files of
 * `location ~ ^/dl/(.*)$ { alias /srv/files/$1; }` stay in `/srv/files`.
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
  if (conf.alias === null || conf.regex === null) return root;
  const captures = vars.captures;
  vars.captures = [];
  let literal: string;
  try {
    literal = conf.alias.evaluate(vars);
  } finally {
    vars.captures = captures;
  }
  const slash = Math.max(literal.lastIndexOf("/"), literal.lastIndexOf("\\"));
  return slash > 0 ? literal.slice(0, slash) : literal;
}
