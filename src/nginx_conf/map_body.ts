/**
 * How the request is read, as process-wide settings: nginx's
 * `client_body_timeout`, `client_body_buffer_size`, `client_body_temp_path`
 * and `proxy_request_buffering` (as the first proxied location has them),
 * and `large_client_header_buffers` (as the first server has it). The
 * gateway reads every request the same way; per-location values are a
 * named difference.
 *
 * @module
 */

import { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { type NginxSettings, prefixed } from "./paths.ts";
import { sizeSetting, timeSetting } from "./values.ts";

/** The settings, and what was refused or warned about (`in FILE:LINE`). */
export interface RequestReading {
  /** The settings found. */
  settings: NginxSettings;
  /** `[emerg]` texts. */
  errors: string[];
  /** `[warn]` texts. */
  warnings: string[];
}

/** The first location (depth first, in file order) that proxies, with its level. */
function proxiedLevel(level: Level): Level | null {
  for (const d of level.block) {
    if (d.name !== "location" || d.block === undefined) continue;
    const inner = new Level(level, d.block);
    if (d.block.some((x) => x.name === "proxy_pass")) return inner;
    const deeper = proxiedLevel(inner);
    if (deeper !== null) return deeper;
  }
  return null;
}

/**
 * Reads the request-reading directives of a parsed configuration.
 *
 * @param directives The top-level directives.
 * @param prefix The nginx prefix.
 * @returns The settings and findings.
 */
export function requestReading(
  directives: readonly Directive[],
  prefix: string,
): RequestReading {
  const out: RequestReading = { settings: {}, errors: [], warnings: [] };
  const at = (d: Directive, message: string) =>
    `${message} in ${d.file}:${d.line}`;
  const http = directives.find((d) => d.name === "http");
  const serverBlock = http?.block?.find((d) => d.name === "server");
  if (http?.block === undefined || serverBlock?.block === undefined) return out;
  const server = new Level(new Level(null, http.block), serverBlock.block);
  const proxied = proxiedLevel(server) ?? server;
  const s = out.settings;
  const timeout = proxied.last("client_body_timeout");
  if (timeout !== undefined) {
    const value = timeSetting(timeout.name, timeout.args[0]!);
    if (value.ok) s.clientBodyTimeout = value.value;
    else out.errors.push(at(timeout, value.error));
  }
  const buffer = proxied.last("client_body_buffer_size");
  if (buffer !== undefined) {
    const value = sizeSetting(buffer.name, buffer.args[0]!);
    if (value.ok) s.clientBodyBufferSize = value.value;
    else out.errors.push(at(buffer, value.error));
  }
  const temp = proxied.last("client_body_temp_path");
  if (temp !== undefined) {
    if (temp.args.length > 1) {
      out.warnings.push(at(
        temp,
        `"client_body_temp_path ${
          temp.args.join(" ")
        }": the gateway keeps its files in the folder itself, without levels`,
      ));
    }
    s.clientBodyTempPath = prefixed(prefix, temp.args[0]!);
  }
  const buffering = proxied.last("proxy_request_buffering");
  if (buffering !== undefined) {
    s.proxyRequestBuffering = buffering.args[0]!.toLowerCase();
  }
  const headers = server.last("large_client_header_buffers");
  if (headers !== undefined) {
    const size = sizeSetting(headers.name, headers.args[1]!);
    if (!/^\d+$/.test(headers.args[0]!) || !size.ok) {
      out.errors.push(at(headers, `"${headers.name}" directive invalid value`));
    } else {
      s.largeClientHeaderBuffers = `${headers.args[0]} ${size.value}`;
    }
  }
  return out;
}
