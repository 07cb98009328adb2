/**
 * TLS in an nginx.conf: each server's certificate and key
 * (`ssl_certificate`, `ssl_certificate_key`, from the server or inherited
 * from http), nginx's start checks (`ngx_http_ssl_merge_srv_conf`,
 * `ngx_http_ssl_init`), and the tuning directives the runtime (Deno's
 * rustls) decides itself, warned about only where the value asks for
 * something else.
 *
 * @module
 */

import type { ServerConf, SslConf } from "../engine/mod.ts";
import { groupByListen } from "../engine/mod.ts";
import type { Level } from "./compile_level.ts";
import type { Directive } from "./parser.ts";
import { prefixed } from "./paths.ts";

/** What compiling TLS needs from the compiler. */
export interface SslContext {
  /** The folder of the main configuration file (nginx's `conf_prefix`). */
  confPrefix: string;
  /** Refuses a directive (the message gets its place). */
  fail(d: Directive, message: string): void;
  /** Refuses with a message that carries its own place, or none. */
  failAs(message: string): void;
  /** Warns about a directive. */
  warn(d: Directive, message: string): void;
}

/**
 * The warning for each TLS port (`listen … ssl`, `ssl on`): Deno's TLS
 * listener ends a handshake that is not TLS before the gateway sees the
 * request (README, TLS), so the station's administrator hears it at
 * `--check`, not from a browser.
 */
export const PLAIN_ON_TLS_PORT =
  `plain HTTP sent to this port gets a TLS alert and no log line, where nginx answers 400 "The plain HTTP request was sent to HTTPS port"`;

/** `ngx_ssl_protocols`: the names `ssl_protocols` takes (any case). */
const PROTOCOLS = ["sslv2", "sslv3", "tlsv1", "tlsv1.1", "tlsv1.2", "tlsv1.3"];

/** The versions rustls offers: Deno gives no way to choose. */
const RUNTIME_PROTOCOLS = "tlsv1.2 tlsv1.3";

/** nginx's `ssl_ciphers` default, which rustls' suites all satisfy. */
const DEFAULT_CIPHERS = "HIGH:!aNULL:!MD5";

/**
 * Checks the TLS directives a level sets itself that are read by value:
 * `ssl_protocols` (nginx's `invalid value`), `ssl_ciphers` and
 * `ssl_prefer_server_ciphers` (a warning when they ask for what the
 * runtime does not do).
 *
 * @param block The level's directives.
 * @param ctx Where refusals and warnings go.
 */
export function checkSslTuning(
  block: readonly Directive[],
  ctx: SslContext,
): void {
  for (const d of block) {
    if (d.name === "ssl_protocols") {
      const bad = d.args.find((a) => !PROTOCOLS.includes(a.toLowerCase()));
      if (bad !== undefined) {
        ctx.fail(d, `invalid value "${bad}"`);
        continue;
      }
      const asked = [...new Set(d.args.map((a) => a.toLowerCase()))].sort()
        .join(" ");
      if (asked !== RUNTIME_PROTOCOLS) {
        ctx.warn(
          d,
          `"ssl_protocols ${
            d.args.join(" ")
          }" is ignored: the runtime (rustls) offers TLSv1.2 and TLSv1.3`,
        );
      }
    } else if (d.name === "ssl_ciphers" && d.args[0] !== DEFAULT_CIPHERS) {
      ctx.warn(
        d,
        `"ssl_ciphers" is ignored: the runtime (rustls) offers its own suites, AES-GCM and ChaCha20-Poly1305 with forward secrecy`,
      );
    } else if (
      d.name === "ssl_prefer_server_ciphers" &&
      d.args[0]!.toLowerCase() === "on"
    ) {
      ctx.warn(
        d,
        `"ssl_prefer_server_ciphers on" is ignored: the runtime (rustls) follows the client's order of suites`,
      );
    } else if (d.name === "ssl") {
      // ngx_http_ssl_enable: accepted with this warning in nginx 1.22.
      ctx.warn(
        d,
        `the "ssl" directive is deprecated, use the "listen ... ssl" directive instead`,
      );
      if (d.args[0]?.toLowerCase() === "on") {
        ctx.warn(d, `"ssl on": ${PLAIN_ON_TLS_PORT}`);
      }
    }
  }
}

/**
 * A server's certificate and key from the nearest level that sets them,
 * with nginx's refusal of a certificate without a key.
 *
 * @param level The server's level (its parent is http).
 * @param ctx Where refusals go.
 * @returns The paths (absolute), or `undefined` when the server has no
 * certificate.
 */
export function serverSsl(level: Level, ctx: SslContext): SslConf | undefined {
  const certs = level.get("ssl_certificate");
  if (certs.length === 0) return undefined;
  if (certs.length > 1) {
    ctx.fail(
      certs[1]!,
      `several "ssl_certificate" are not supported: the gateway serves one certificate per server`,
    );
  }
  const cert = certs[0]!;
  const key = level.last("ssl_certificate_key");
  // nginx 1.15.9+ loads such a pair per handshake, by the name the client
  // sends; the runtime takes one pair when it listens.
  const dynamic = [cert, key].find((d) => d?.args[0]?.includes("$"));
  if (dynamic !== undefined) {
    ctx.fail(
      dynamic,
      `"${dynamic.name}" with variables is not supported: the gateway loads one certificate at start`,
    );
    return undefined;
  }
  if (key === undefined) {
    // ngx_http_ssl_merge_srv_conf names the certificate as written, no place.
    ctx.failAs(
      `no "ssl_certificate_key" is defined for certificate "${cert.args[0]}"`,
    );
    return undefined;
  }
  return {
    certificate: prefixed(ctx.confPrefix, cert.args[0]!),
    certificateKey: prefixed(ctx.confPrefix, key.args[0]!),
    place: { file: cert.file, line: cert.line },
    pem: null,
  };
}

/** Whether a server level turns TLS on with the deprecated `ssl on;`. */
export function sslOn(level: Level): boolean {
  return level.last("ssl")?.args[0]?.toLowerCase() === "on";
}

/**
 * nginx's checks of TLS ports once every server is read: the default
 * server of a TLS port must have a certificate (`ngx_http_ssl_init`), and
 * since the runtime serves one certificate per port (no choice by the
 * name a client sends, SNI), every other server on it with a certificate
 * must have the same one.
 *
 * @param servers The servers in file order.
 * @param ctx Where refusals go.
 * @param refused Servers whose certificate was refused already (no
 * second line for them).
 */
export function checkSslPorts(
  servers: readonly ServerConf[],
  ctx: SslContext,
  refused: ReadonlySet<ServerConf>,
): void {
  for (const group of groupByListen(servers, "port")) {
    if (!group.ssl) continue;
    const chosen = group.certificate;
    if (chosen === null) {
      if (refused.has(group.defaultServer)) continue;
      const { file, line } = group.defaultServer.place;
      ctx.failAs(
        `no "ssl_certificate" is defined for the "listen ... ssl" directive in ${file}:${line}`,
      );
      continue;
    }
    for (const server of group.servers) {
      const own = server.ssl;
      if (
        own === undefined ||
        (own.certificate === chosen.certificate &&
          own.certificateKey === chosen.certificateKey)
      ) {
        continue;
      }
      ctx.failAs(
        `"ssl_certificate" "${own.certificate}" beside "${chosen.certificate}" on port ${group.port} is not supported: the gateway serves one certificate per port (no choice by server name, SNI) in ${own.place.file}:${own.place.line}`,
      );
    }
  }
}
