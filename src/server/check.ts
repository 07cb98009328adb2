/**
 * `--check`: what `nginx -t` does for nginx. Validates the configuration (it
 * was parsed already), opens the log files, binds the listen addresses for a
 * moment, says whether the client app is installed and whether the upstream
 * answers now. Findings are returned as data; `startup.ts` prints and logs
 * them.
 *
 * @module
 */

import { listenHosts } from "../config/mod.ts";
import type { GatewayConfig } from "../config/mod.ts";
import type { HttpConf } from "../engine/mod.ts";
import { listenPorts } from "../request/mod.ts";
import { probeHttp } from "../upstream/mod.ts";
import type { LogLevel } from "../log/mod.ts";
import type { OsErrorText } from "../runtime/mod.ts";
import { LogFile } from "../log/mod.ts";
import { currentOsFamily, osErrorOf, type OsFamily } from "../runtime/mod.ts";

/** One line of the report. */
export interface CheckFinding {
  /** nginx's level; absent for a plain statement. */
  level?: LogLevel;
  /** The message, e.g. `bind() to 127.0.0.1:8081 failed`. */
  message: string;
  /** The OS error, printed after the message. */
  osError?: OsErrorText;
}

/** Options for {@linkcode checkConfig}. */
export interface CheckOptions {
  /**
   * How long the upstream probe waits for a connection.
   *
   * @default {3000}
   */
  probeTimeoutMs?: number;
  /** @default {currentOsFamily()} */
  family?: OsFamily;
}

function shown(hostname: string): string {
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

function failure(message: string, error: unknown, family: OsFamily) {
  const osError = osErrorOf(error, family);
  return {
    level: "emerg" as const,
    message: osError === undefined ? `${message}: ${error}` : message,
    ...(osError === undefined ? {} : { osError }),
  };
}

/**
 * Checks a configuration and reports each finding in nginx's words.
 *
 * @param config The parsed configuration.
 * @param options The probe's timeout and the OS numbering.
 * @returns The findings; the check fails when one is at `emerg`. An upstream
 * that does not answer is a `warn`: it may start after the gateway.
 */
export async function checkConfig(
  config: GatewayConfig,
  options: CheckOptions = {},
): Promise<CheckFinding[]> {
  const family = options.family ?? currentOsFamily();
  const call = family === "windows" ? "CreateFile()" : "open()";
  const findings: CheckFinding[] = [];
  const logs = new Set([
    config.errorLog,
    config.accessLog,
    ...(config.engine?.accessLogFiles ?? []),
    ...(config.engine?.errorLogFiles ?? []),
  ]);
  for (const path of logs) {
    // `error_log stderr` is no file to open.
    if (path === null || path === "stderr") continue;
    try {
      LogFile.open(path).close();
    } catch (error) {
      findings.push(failure(`${call} "${path}" failed`, error, family));
    }
  }
  let bound = 0;
  for (const hostname of listenHosts(config.listen.hostname)) {
    const address = `${shown(hostname)}:${config.listen.port}`;
    try {
      Deno.listen({ hostname, port: config.listen.port }).close();
      bound++;
    } catch (error) {
      // As main.ts: a machine without an IPv6 loopback serves localhost on
      // 127.0.0.1 alone.
      const optionalV6 = hostname === "::1" && bound > 0 &&
        !(error instanceof Deno.errors.AddrInUse);
      const found = failure(`bind() to ${address} failed`, error, family);
      findings.push(
        optionalV6
          ? {
            ...found,
            level: "notice",
            message: `${found.message}, listening on IPv4 only`,
          }
          : found,
      );
    }
  }
  // An nginx.conf's other ports, as lifecycle.ts binds them.
  const others = config.engine ? listenPorts(config.engine).slice(1) : [];
  for (const group of others) {
    for (const hostname of group.hostnames) {
      try {
        Deno.listen({ hostname, port: group.port }).close();
      } catch (error) {
        findings.push(
          failure(
            `bind() to ${shown(hostname)}:${group.port} failed`,
            error,
            family,
          ),
        );
      }
    }
  }
  if (config.engine !== undefined) {
    // An nginx.conf: its own upstreams, not the built-in /api/ and client
    // app (which such a file does not have unless it says so).
    findings.push(...await checkEngineUpstreams(config.engine, options));
    return findings;
  }
  let rootOk = false;
  try {
    rootOk = (await Deno.stat(config.root)).isDirectory;
  } catch {
    // reported below
  }
  findings.push(
    rootOk ? { message: `client app folder "${config.root}" found` } : {
      level: "warn",
      message:
        `client app folder "${config.root}" does not exist: the built-in page will be served at /`,
    },
  );
  findings.push({
    message: `/${config.apiPrefix}/ goes to ${
      config.upstreams.map((u) =>
        `${u.address.origin}/${u.backup ? " (backup)" : ""}`
      ).join(", ")
    }`,
  });
  const timeoutMs = options.probeTimeoutMs ?? 3000;
  const probes = await Promise.all(
    config.upstreams.map(({ address }) =>
      probeHttp({
        hostname: address.hostname,
        port: address.port,
        host: address.origin.slice("http://".length),
        timeoutMs,
      })
    ),
  );
  probes.forEach((probe, i) => {
    const origin = `${config.upstreams[i]!.address.origin}/`;
    findings.push(
      probe.ok ? { message: `upstream ${origin} answers (${probe.detail})` } : {
        level: "warn",
        message:
          `upstream ${origin} does not answer now: ${probe.reason}; /api/ gets 502 until it does`,
      },
    );
  });
  return findings;
}

/**
 * The upstream servers an nginx.conf proxies to, each probed: a server that
 * does not answer is a `warn` naming its group, as the built-in check does
 * for `/api/`.
 */
async function checkEngineUpstreams(
  conf: HttpConf,
  options: CheckOptions,
): Promise<CheckFinding[]> {
  // An upstream{} that fastcgi_pass names speaks FastCGI: an HTTP probe
  // would call a working application silent.
  const fastcgi = conf.fastcgiUpstreams;
  const servers = [...conf.upstreams.values()].filter((group) =>
    !fastcgi?.has(group.name)
  ).flatMap((group) =>
    group.servers.filter((s) => !s.down).map((server) => ({ group, server }))
  );
  const timeoutMs = options.probeTimeoutMs ?? 3000;
  const probes = await Promise.all(
    servers.map(({ server }) =>
      probeHttp({
        hostname: server.hostname,
        port: server.port,
        host: server.address,
        timeoutMs,
      })
    ),
  );
  return probes.map((probe, i) => {
    const { group, server } = servers[i]!;
    const host = server.hostname.includes(":")
      ? `[${server.hostname}]`
      : server.hostname;
    const origin = `http://${host}:${server.port}/`;
    // An implicit group is named by its one address: said once.
    const name = group.explicit
      ? `upstream "${group.name}" server `
      : "upstream ";
    return probe.ok
      ? { message: `${name}${origin} answers (${probe.detail})` }
      : {
        level: "warn",
        message:
          `${name}${origin} does not answer now: ${probe.reason}; requests proxied to it get 502 until it does`,
      };
  });
}
