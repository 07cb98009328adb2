/**
 * nginx's answer for a folder named without its slash
 * (`ngx_http_static_handler`): 301 to the URI with `/`, absolute, escaped
 * as nginx 1.22 escapes it.
 *
 * @module
 */

import type { RequestVars } from "../engine/mod.ts";
import { errorResponse } from "../response/mod.ts";
import type { StaticResult } from "./static_results.ts";

/**
 * A folder named without its slash: 301 to `$uri/` and the query, as an
 * absolute URL (`absolute_redirect on`): the request's host (the local
 * address when it sent none) and the port unless it is the scheme's
 * default (`port_in_redirect on`), as `ngx_http_header_filter` writes it.
 *
 * @param uri `$uri`, decoded.
 * @param v The request's variables: host, local address and port, query.
 * @param head A HEAD request.
 * @returns The 301.
 */
export function folderRedirect(
  uri: string,
  v: RequestVars,
  head: boolean,
): StaticResult {
  const host = v.headers.has("host") ? v.host : v.serverAddr;
  const defaultPort = v.scheme === "https" ? 443 : 80;
  const port = v.serverPort === defaultPort ? "" : `:${v.serverPort}`;
  const query = v.args === "" ? "" : `?${v.args}`;
  const location = `${v.scheme}://${host}${port}${locationBytes(uri)}/${query}`;
  return {
    response: errorResponse(301, { head, headers: { location } }),
  };
}

/**
 * Bytes nginx 1.22 escapes in a folder's `Location` (`ngx_escape_uri`,
 * `NGX_ESCAPE_URI`, as observed on 1.22.1): controls, space, `"`, `#`,
 * `%`, `<`, `>`, `?`, `\`, `^`, `` ` ``, `{`, `|`, `}`, DEL and every byte
 * past ASCII.
 */
// deno-lint-ignore no-control-regex
const LOCATION_ESCAPED = /[\x00-\x20"#%<>?\\^`{|}\x7f-\xff]/;

/** The decoded `$uri` as nginx writes it into `Location`: UTF-8, escaped. */
function locationBytes(uri: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(uri)) {
    const c = String.fromCharCode(byte);
    out += LOCATION_ESCAPED.test(c)
      ? `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
      : c;
  }
  return out;
}
