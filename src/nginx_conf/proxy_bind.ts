/**
 * `proxy_bind`'s verdict. The runtime's connect takes no local address
 * (`Deno.connect` has no such option), so the system picks it: for a back
 * end on this machine, the loopback address of its family. That is what
 * `proxy_bind 127.0.0.1` and `proxy_bind ::1` ask for, so both are accepted
 * with the table's warning; `off` is nginx's default. Any other address,
 * `transparent` or a variable (`ngx_http_upstream_bind_set_slot` reads all
 * three) would change the address the back end sees: refused.
 *
 * @module
 */

/** The addresses the system itself picks towards a loopback back end. */
const LOOPBACK = new Set(["127.0.0.1", "::1"]);

/**
 * What the gateway does with a `proxy_bind` line's arguments.
 *
 * @param args The arguments as written.
 * @returns `default` for `off`, `warn` for a loopback address (the table's
 * warning applies), or the refusal's reason.
 *
 * @example Usage
 * ```ts
 * import { proxyBindVerdict } from "./proxy_bind.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(proxyBindVerdict(["127.0.0.1"]), "warn");
 * strictEqual(proxyBindVerdict(["off"]), "default");
 * ```
 */
export function proxyBindVerdict(
  args: readonly string[],
): "default" | "warn" | { refused: string } {
  if (args.length === 1 && args[0] === "off") return "default";
  if (args.length === 1 && LOOPBACK.has(args[0]!)) return "warn";
  return {
    refused: "the runtime cannot choose the local address of a connection",
  };
}
