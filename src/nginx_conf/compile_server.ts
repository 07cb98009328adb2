/**
 * A `server` block compiled: its `listen` sockets with nginx's parameters,
 * its `server_name`s (exact, wildcard, regex), its TLS settings, its own
 * level and its named locations (`compile_location_tree.ts`).
 *
 * @module
 */

import {
  type Listen,
  type LocationConf,
  machineHostname,
  parseServerName,
  type ServerConf,
  type ServerName,
  ValueError,
} from "../engine/mod.ts";
import { hostAddress } from "../access/mod.ts";
import type { CompileContext } from "./compile_context.ts";
import { Level } from "./compile_level.ts";
import type { LocationTree } from "./compile_location_tree.ts";
import {
  checkSslTuning,
  PLAIN_ON_TLS_PORT,
  serverSsl,
  type SslContext,
  sslOn,
} from "./compile_ssl.ts";
import type { ListenAddresses } from "./listen_addresses.ts";
import type { Directive } from "./parser.ts";
import { serverNameProblem } from "./server_names_check.ts";
import { listenParameter, listenSetting } from "./values.ts";

/** What compiling a server needs from the compiler, made once. */
export interface ServerContext
  extends Pick<CompileContext, "fail" | "warn" | "accepted"> {
  /** The `http` level servers inherit from. */
  readonly http: Level;
  /** TLS files' folder and where their refusals go. */
  readonly ssl: SslContext;
  /** Collects the servers whose `ssl_certificate` was refused. */
  readonly sslRefused: Set<ServerConf>;
  /** Compiles the server's levels. */
  readonly locations: LocationTree;
  /** The `http` block's `listen` addresses so far, checked as nginx's. */
  readonly listenAddresses: ListenAddresses;
}

/**
 * A `server` block: its sockets, names, TLS settings, its own level and
 * its named locations.
 *
 * @param d The `server` directive.
 * @param ctx The `http` level, where refusals go, and the location tree.
 * @returns The server's model.
 */
export function compileServer(d: Directive, ctx: ServerContext): ServerConf {
  const block = ctx.accepted(d.block!);
  const level = new Level(ctx.http, block);
  const listens = block.filter((x) => x.name === "listen").flatMap((x) =>
    listen(x, ctx, block)
  );
  if (listens.length === 0) {
    listens.push({
      hostname: "0.0.0.0",
      port: 80,
      defaultServer: false,
      ssl: false,
      http2: false,
      text: "*:80",
    });
  }
  checkSslTuning(block, ctx.ssl);
  // The deprecated `ssl on;` makes every socket of the server TLS.
  if (sslOn(level)) { for (const l of listens) l.ssl = true; }
  const ssl = serverSsl(level, ctx.ssl);
  const names: ServerName[] = [];
  for (const x of block.filter((x) => x.name === "server_name")) {
    for (const written of x.args) {
      // `$hostname` is the machine's name (ngx_http_core_server_name).
      const problem = serverNameProblem(written);
      if (problem !== null) {
        ctx.fail(x, problem);
        break;
      }
      const arg = serverNameOf(written);
      if (arg === "" || arg === "_") continue;
      // The name goes into error lines as it is: nginx warns about
      // such names ("suspicious symbols"); the gateway refuses them.
      // deno-lint-ignore no-control-regex
      if (/[\x00-\x20"\x7f]/.test(arg)) {
        ctx.fail(x, `server name "${arg}" has suspicious symbols`);
        continue;
      }
      try {
        names.push(parseServerName(arg));
      } catch (error) {
        if (!(error instanceof ValueError)) throw error;
        ctx.fail(x, error.message);
      }
    }
  }
  const first = serverNameOf(
    block.find((x) => x.name === "server_name")?.args[0] ?? "",
  );
  // `$server_name`: the first name, a `.x.com`'s without its dot (nginx
  // keeps `x.com` for it).
  const firstName = first.startsWith(".") ? first.slice(1) : first;
  const conf = ctx.locations.location(level, {
    match: "prefix",
    name: "",
    regex: null,
    place: null,
  });
  const named = new Map<string, LocationConf>();
  for (const loc of block.filter((x) => x.name === "location")) {
    const name = loc.args.length === 1 ? loc.args[0]! : "";
    if (name.startsWith("@")) {
      named.set(name, ctx.locations.nested(loc, level, conf));
    }
  }
  const server: ServerConf = {
    listens,
    names,
    // The first name as written, a regex's too (`~^…$`, nginx's
    // cscf->server_name).
    serverName: firstName,
    conf,
    named,
    place: { file: d.file, line: d.line },
    ...(ssl === undefined ? {} : { ssl }),
  };
  if (ssl === undefined && level.get("ssl_certificate").length > 0) {
    ctx.sslRefused.add(server);
  }
  return server;
}

/**
 * A `listen` directive's socket, with nginx's parameters read or refused,
 * and checked against the sockets before it (`server`: the server's block).
 */
function listen(d: Directive, ctx: ServerContext, server: object): Listen[] {
  const [address = "", ...params] = d.args;
  const parsed = listenSetting(address);
  if (!parsed.ok) {
    ctx.fail(d, parsed.error);
    return [];
  }
  const text = parsed.value;
  const colon = text.lastIndexOf(":");
  let hostname = text.slice(0, colon);
  const port = Number(text.slice(colon + 1));
  // Port 0 (any free port) is the gateway's own, for tests and probes.
  if (!(port >= 0 && port <= 65535)) {
    ctx.fail(d, `invalid port in "${address}" of the "listen" directive`);
    return [];
  }
  if (hostname === "*") hostname = "0.0.0.0";
  // An address as nginx reads it (`127.0.0.010` is 127.0.0.10), bound as
  // nginx prints it: the system's resolver would read it as octal.
  hostname = hostAddress(hostname) ?? hostname;
  if (hostname.startsWith("[")) hostname = hostname.slice(1, -1);
  if (hostname === "localhost") hostname = "127.0.0.1";
  const listen: Listen = {
    hostname,
    port,
    defaultServer: false,
    ssl: false,
    http2: false,
    text: address,
  };
  let tuned = false;
  for (const param of params) {
    if (param === "default_server" || param === "default") {
      listen.defaultServer = true;
    } else if (param === "ssl") {
      listen.ssl = true;
      ctx.warn(d, `"listen … ssl": ${PLAIN_ON_TLS_PORT}`);
    } else if (param === "http2") {
      listen.http2 = true;
    } else if (listenParameter(param) === "invalid") {
      ctx.fail(d, `invalid parameter "${param}"`);
    } else if (listenParameter(param) === "emerg") {
      ctx.fail(
        d,
        `"listen … ${param}" is not supported: the gateway serves HTTP/1.1 and HTTP/2 over TCP`,
      );
    } else {
      tuned = true;
      ctx.warn(
        d,
        `"listen … ${param}" is ignored: it only tunes how nginx does its work`,
      );
    }
  }
  const duplicate = ctx.listenAddresses.add(listen, server, tuned);
  if (duplicate !== null) ctx.fail(d, duplicate);
  return [listen];
}

/** A `server_name` argument as nginx takes it: `$hostname` is the machine's. */
function serverNameOf(arg: string): string {
  return arg.toLowerCase() === "$hostname" ? machineHostname() : arg;
}
