/**
 * The addresses the flags name: where to listen, and the upstream servers
 * as nginx writes a `server` line. Errors are thrown by meaning (`TypeError`
 * for a wrong shape, `RangeError` for a value out of range) with the std
 * message style, naming the value.
 *
 * @module
 */

import type { UpstreamAddress, UpstreamServerSpec } from "../upstream/mod.ts";
import { hostAddress } from "../access/mod.ts";
import { parseDuration } from "./config_values.ts";

/** An address to listen on. `localhost` means both 127.0.0.1 and ::1. */
export interface ListenAddress {
  /** A host name or IP address; `localhost` listens on both loopbacks. */
  hostname: string;
  /** The port; 0 picks a free one. */
  port: number;
}

/** The port the upstream gets when `--upstream` names none. */
const DEFAULT_UPSTREAM_PORT = 8080;

function parsePort(text: string, what: string, value: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port > 65535) {
    throw new RangeError(
      `Cannot parse ${what} "${value}": port must be 0 to 65535`,
    );
  }
  return port;
}

/**
 * Parses `--listen`: `port`, `host:port`, `[v6]:port` or `*:port`.
 *
 * @param value The text.
 * @returns The address; a bare port listens on `localhost` (both loopbacks),
 * so nothing is exposed to the LAN unless asked.
 * @throws {TypeError | RangeError} On a malformed value.
 *
 * @example Usage
 * ```ts
 * import { parseListen } from "./addresses.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(parseListen("8081"), { hostname: "localhost", port: 8081 });
 * deepStrictEqual(parseListen("*:80"), { hostname: "0.0.0.0", port: 80 });
 * ```
 */
export function parseListen(value: string): ListenAddress {
  if (/^\d+$/.test(value)) {
    return { hostname: "localhost", port: parsePort(value, "listen", value) };
  }
  const m = value.match(/^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.*-]+)):(\d+)$/);
  if (!m) {
    throw new TypeError(
      `Cannot parse listen "${value}": expected [host:]port, like 127.0.0.1:8081`,
    );
  }
  const host = m[1] ?? m[2] ?? "";
  // An address as nginx reads it (`127.0.0.010` is 127.0.0.10), bound as
  // nginx prints it: the system's resolver would read it as octal.
  const address = hostAddress(m[1] === undefined ? host : `[${host}]`);
  return {
    hostname: host === "*"
      ? "0.0.0.0"
      : address?.replace(/^\[(.*)\]$/, "$1") ?? host.toLowerCase(),
    port: parsePort(m[3] ?? "", "listen", value),
  };
}

/**
 * The addresses a listen host binds: `localhost` is both loopbacks, IPv4
 * first (the gateway and `--check` bind the same list).
 *
 * @param hostname The listen address's host.
 * @returns The addresses to bind.
 *
 * @example Usage
 * ```ts
 * import { listenHosts } from "./addresses.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(listenHosts("localhost"), ["127.0.0.1", "::1"]);
 * deepStrictEqual(listenHosts("0.0.0.0"), ["0.0.0.0"]);
 * ```
 */
export function listenHosts(hostname: string): string[] {
  return hostname === "localhost" ? ["127.0.0.1", "::1"] : [hostname];
}

/**
 * Parses `--upstream`: an `http://` URL with a host, an optional port (8080
 * when omitted) and nothing after it but an optional `/`.
 *
 * @param value The text.
 * @returns The address.
 * @throws {TypeError | RangeError} On anything else, naming the value.
 *
 * @example Usage
 * ```ts
 * import { parseUpstream } from "./addresses.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseUpstream("http://10.1.2.3").origin, "http://10.1.2.3:8080");
 * ```
 */
export function parseUpstream(value: string): UpstreamAddress {
  const m = value.match(
    /^http:\/\/(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d+))?\/?$/i,
  );
  if (!m) {
    throw new TypeError(
      `Cannot parse upstream "${value}": expected an http URL with a host, like http://127.0.0.1:8080`,
    );
  }
  const v6 = m[1];
  // An address as nginx reads it, as in parseListen.
  const address = hostAddress(v6 === undefined ? m[2]! : `[${v6}]`);
  const hostname = address?.replace(/^\[(.*)\]$/, "$1") ??
    (v6 ?? m[2] ?? "").toLowerCase();
  const port = m[3] === undefined
    ? DEFAULT_UPSTREAM_PORT
    : parsePort(m[3], "upstream", value);
  if (port === 0) {
    throw new RangeError(
      `Cannot parse upstream "${value}": port must not be 0`,
    );
  }
  const host = v6 === undefined ? hostname : `[${hostname}]`;
  return {
    hostname,
    port,
    // WHATWG URLs drop the scheme's default port: match what fetch and the
    // upstream's own absolute URLs show.
    origin: port === 80 ? `http://${host}` : `http://${host}:${port}`,
    peer: `${host}:${port}`,
  };
}

/**
 * Parses `--upstream-group`, the name nginx prints as `http://NAME/…` when
 * every server of the group is unavailable.
 *
 * @param value The text.
 * @returns The name.
 * @throws {TypeError} When it has other characters than letters, digits, `.`, `_` and `-`.
 */
export function parseGroupName(value: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(value)) {
    throw new TypeError(
      `Cannot parse upstream-group "${value}": expected letters, digits, ".", "_" or "-"`,
    );
  }
  return value;
}

/**
 * Parses one upstream as nginx writes a `server` line:
 * `URL [backup] [max_fails=N] [fail_timeout=T]`.
 *
 * @param value The text.
 * @returns The server.
 * @throws {TypeError | RangeError} On anything else, naming the value.
 *
 * @example Usage
 * ```ts
 * import { parseUpstreamServer } from "./addresses.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const s = parseUpstreamServer("http://127.0.0.1 backup fail_timeout=30s");
 * strictEqual(s.address.peer, "127.0.0.1:8080");
 * strictEqual(s.backup, true);
 * strictEqual(s.failTimeoutMs, 30000);
 * ```
 */
export function parseUpstreamServer(value: string): UpstreamServerSpec {
  const [url = "", ...params] = value.trim().split(/\s+/);
  const spec: UpstreamServerSpec = {
    address: parseUpstream(url),
    backup: false,
    maxFails: 1,
    failTimeoutMs: 10_000,
  };
  for (const param of params) {
    const [key, arg] = param.split("=", 2) as [string, string | undefined];
    if (key === "backup" && arg === undefined) spec.backup = true;
    else if (
      key === "max_fails" && arg !== undefined && /^\d{1,15}$/.test(arg)
    ) {
      spec.maxFails = Number(arg);
    } else if (key === "fail_timeout" && arg !== undefined) {
      spec.failTimeoutMs = parseDuration(arg, "fail_timeout");
    } else {
      throw new TypeError(
        `Cannot parse upstream "${value}": unknown parameter "${param}", expected backup, max_fails=N or fail_timeout=T`,
      );
    }
  }
  return spec;
}
