/**
 * nginx's check of the `Host` field (`ngx_http_validate_host`): what it
 * refuses with 400 "client sent invalid host header", and nothing more, so
 * a name nginx serves is served.
 *
 * @module
 */

/**
 * Whether nginx accepts a `Host` value: no control characters, spaces or
 * path separators (`/`, and `\` on Windows), no `..`, and a name that is
 * not empty once a port and one trailing dot are set aside.
 *
 * @param host The field's value.
 * @param windows Use nginx for Windows' path separators.
 * @returns Whether it is valid.
 *
 * @example Usage
 * ```ts
 * import { isValidHost } from "./host.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isValidHost("localhost:8081"), true);
 * strictEqual(isValidHost("a@b"), true);
 * strictEqual(isValidHost("a/b"), false);
 * strictEqual(isValidHost("a..b"), false);
 * strictEqual(isValidHost(":80"), false);
 * ```
 */
export function isValidHost(
  host: string,
  windows = Deno.build.os === "windows",
): boolean {
  // Most requests carry the last request's Host: a comparison, not the
  // walk (0.04 against 0.20 µs for `localhost:8081` in a loop).
  if (host === lastValid && windows === lastValidOnWindows) return true;
  const valid = validHost(host, windows);
  if (valid) {
    lastValid = host;
    lastValidOnWindows = windows;
  }
  return valid;
}

/** The last `Host` found valid, and for which platform's separators. */
let lastValid: string | null = null;
let lastValidOnWindows = false;

function validHost(host: string, windows: boolean): boolean {
  return nameLength(host, windows, true) > 0;
}

/**
 * The name of a `Host` as nginx keeps it for `$host` and the server's
 * choice (ngx_http_validate_host): up to the first `:` outside a leading
 * `[...]` (`a:80:80` is `a`), one trailing dot dropped when the last dot
 * of the whole value ends the name (`a.:8.0` keeps its dot, as nginx
 * does), ASCII letters in lower case (`ngx_strlow`: bytes above 0x7f as
 * they are). Not checked: {@linkcode isValidHost} says whether it is
 * valid.
 *
 * @param host The field's value (or an absolute-form line's authority).
 * @returns The name; empty when there is none.
 *
 * @example Usage
 * ```ts
 * import { hostNameOf } from "./host.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(hostNameOf("Admin.Local:80:80"), "admin.local");
 * strictEqual(hostNameOf("[::1]:8081"), "[::1]");
 * strictEqual(hostNameOf("a.:80"), "a");
 * ```
 */
export function hostNameOf(host: string): string {
  const name = host.slice(0, Math.max(0, nameLength(host, false, false)));
  for (let i = 0; i < name.length; i++) {
    if (name.charCodeAt(i) > 0x7f) return asciiLower(name);
  }
  return name.toLowerCase();
}

/** ASCII letters in lower case, other chars (bytes) as they are. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/**
 * ngx_http_validate_host's walk: the name's length (`host_len`), or -1
 * for a value it refuses when `strict`.
 */
function nameLength(host: string, windows: boolean, strict: boolean): number {
  let dot = -2;
  let nameEnd = host.length;
  // 0: the name, 1: inside `[...]`, 2: after the name (the port).
  let state = 0;
  for (let i = 0; i < host.length; i++) {
    const ch = host.charCodeAt(i);
    switch (ch) {
      case 0x2e: // "."
        if (dot === i - 1 && strict) return -1;
        dot = i;
        break;
      case 0x3a: // ":"
        if (state === 0) {
          nameEnd = i;
          state = 2;
        }
        break;
      case 0x5b: // "["
        if (i === 0) state = 1;
        break;
      case 0x5d: // "]"
        if (state === 1) {
          nameEnd = i + 1;
          state = 2;
        }
        break;
      default:
        if (!strict) break;
        if (ch === 0x2f || (windows && ch === 0x5c)) return -1;
        if (ch <= 0x20 || ch === 0x7f) return -1;
    }
  }
  if (dot === nameEnd - 1) nameEnd--;
  return nameEnd;
}
