/**
 * The origin an absolute redirect names, as nginx's header filter builds
 * it (`ngx_http_header_filter`, `absolute_redirect on`): the name the
 * client reached the gateway by, and the port the request came in on.
 *
 * @module
 */

/**
 * The origin the client reached the gateway at: the `Host` name with the
 * listening port, left out when standard for the scheme.
 *
 * @param host The client's `Host`, or `null`.
 * @param port The port the request came in on.
 * @param scheme `https` on a TLS socket (its standard port is 443).
 * @returns e.g. `http://localhost:8081`.
 *
 * @example Usage
 * ```ts
 * import { publicOrigin } from "./origin.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(publicOrigin("station7:9999", 8081), "http://station7:8081");
 * strictEqual(publicOrigin(null, 80), "http://127.0.0.1");
 * ```
 */
export function publicOrigin(
  host: string | null,
  port: number,
  scheme: "http" | "https" = "http",
): string {
  const colon = host === null ? -1 : host.indexOf(":");
  // nginx names the validated Host (r->headers_in.server): lower case, no
  // trailing dot (ngx_http_validate_host).
  const name = host === null || host === ""
    ? "127.0.0.1"
    : host.startsWith("[")
    ? host.slice(0, host.indexOf("]") + 1).toLowerCase()
    : withoutDot((colon < 0 ? host : host.slice(0, colon)).toLowerCase());
  const standard = scheme === "https" ? 443 : 80;
  return `${scheme}://${name}${port === standard ? "" : `:${port}`}`;
}

function withoutDot(name: string): string {
  return name.endsWith(".") ? name.slice(0, -1) : name;
}
