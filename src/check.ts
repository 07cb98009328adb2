/**
 * `--check`: what `nginx -t` does for nginx. Validates the configuration (it
 * was parsed already), opens the log files, binds the listen addresses for a
 * moment, and says whether the client app is installed.
 *
 * @module
 */

import type { GatewayConfig } from "./config.ts";
import { LogFile } from "./log_file.ts";
import { osErrorOf } from "./upstream_error.ts";

function osText(error: unknown): string {
  const os = osErrorOf(error);
  return os === undefined ? String(error) : `${os.code}: ${os.text}`;
}

/**
 * Checks a configuration and reports each finding in nginx's words.
 *
 * @param config The parsed configuration.
 * @param out Where the report goes.
 * @returns 0 when the gateway can start with it, 1 otherwise.
 */
export function checkConfig(
  config: GatewayConfig,
  out: (line: string) => void,
): number {
  let ok = true;
  for (const path of [config.errorLog, config.accessLog]) {
    if (path === null) continue;
    try {
      LogFile.open(path).close();
    } catch (error) {
      out(
        `station-gateway: [emerg] open() "${path}" failed (${osText(error)})`,
      );
      ok = false;
    }
  }
  const hosts = config.listen.hostname === "localhost"
    ? ["127.0.0.1"]
    : [config.listen.hostname];
  for (const hostname of hosts) {
    try {
      Deno.listen({ hostname, port: config.listen.port }).close();
    } catch (error) {
      const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
      out(
        `station-gateway: [emerg] bind() to ${shown}:${config.listen.port} failed (${
          osText(error)
        })`,
      );
      ok = false;
    }
  }
  let rootOk = false;
  try {
    rootOk = Deno.statSync(config.root).isDirectory;
  } catch {
    // reported below
  }
  out(
    rootOk
      ? `station-gateway: client app folder "${config.root}" found`
      : `station-gateway: [warn] client app folder "${config.root}" does not exist: the built-in page will be served at /`,
  );
  out(
    `station-gateway: /${config.apiPrefix}/ goes to ${
      config.upstreams.map((u) =>
        `${u.address.origin}/${u.backup ? " (backup)" : ""}`
      ).join(", ")
    }`,
  );
  out(
    ok
      ? "station-gateway: configuration test is successful"
      : "station-gateway: configuration test failed",
  );
  return ok ? 0 : 1;
}
