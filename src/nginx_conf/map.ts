/**
 * A parsed nginx.conf onto the gateway's settings, with nginx's semantics
 * and defaults: one `server` with its `listen` and `server_name`, the static
 * location (`root`, `index`, `try_files`, `log_not_found`), the `/api/`
 * location (`map_proxy.ts`), the logs and the error pages. A directive that
 * cannot change what a client or the logs see is accepted with a warning; one
 * that would is refused, naming its file and line.
 *
 * @module
 */

import { mapErrorPages, mapLogs } from "./map_logs.ts";
import { mapProxyLocation } from "./map_proxy.ts";
import { type Directive, NginxConfError } from "./parser.ts";
import {
  last,
  type Levels,
  type NginxSettings,
  prefixed,
  Sink,
} from "./sink.ts";
import { listenParameter, listenSetting } from "./values.ts";

/** The settings, and the warnings about what was accepted but not used. */
export interface MapResult {
  /** The settings, paths absolute. */
  settings: NginxSettings;
  /** `[warn]` texts, each ending `in FILE:LINE`. */
  warnings: string[];
}

/**
 * Maps a parsed configuration.
 *
 * @param directives The top-level directives.
 * @param options The main file (for messages) and the nginx prefix.
 * @returns The settings and warnings.
 * @throws {NginxConfError} At the first directive the gateway cannot honour;
 * `warnings` of the error holds those found before it.
 */
export function mapNginxConf(
  directives: readonly Directive[],
  options: { file: string; prefix: string },
): MapResult {
  const sink = new Sink(options.prefix);
  try {
    const main = sink.levels(new Map(), directives);
    const http = directives.filter((d) => d.name === "http");
    if (http.length === 0) {
      throw new NginxConfError(
        `no "http" block: the gateway has nothing to serve in ${options.file}`,
      );
    }
    if (http.length > 1) sink.emerg(http[1]!, '"http" directive is duplicate');
    mapHttp(sink, http[0]!, main);
  } catch (error) {
    if (error instanceof NginxConfError) error.warnings = sink.warnings;
    throw error;
  }
  return { settings: sink.settings, warnings: sink.warnings };
}

function mapHttp(sink: Sink, http: Directive, main: Levels): void {
  const levels = sink.levels(main, http.block!);
  const upstreams = new Map<string, Directive>();
  for (const d of http.block!) {
    if (d.name !== "upstream") continue;
    if (upstreams.has(d.args[0]!)) {
      sink.emerg(d, `duplicate upstream "${d.args[0]}"`);
    }
    upstreams.set(d.args[0]!, d);
  }
  const servers = http.block!.filter((d) => d.name === "server");
  if (servers.length === 0) sink.emerg(http, 'no "server" block in "http"');
  if (servers.length > 1) {
    sink.emerg(
      servers[1]!,
      'a second "server" block is not supported: the gateway serves one site',
    );
  }
  mapServer(sink, servers[0]!, levels, upstreams);
}

interface Location {
  d: Directive;
  modifier: string;
  uri: string;
  levels: Levels;
}

function mapServer(
  sink: Sink,
  server: Directive,
  parent: Levels,
  upstreams: ReadonlyMap<string, Directive>,
): void {
  const levels = sink.levels(parent, server.block!);
  mapListen(sink, server, levels);
  const names = levels.get("server_name")?.flatMap((d) => d.args) ?? [];
  if (names.length === 0 || names[0] === "") {
    sink.warn(
      server,
      'no "server_name": the "server:" field of error-log lines says "localhost"',
    );
  } else if (/[\s"]/.test(names[0]!)) {
    sink.emerg(
      levels.get("server_name")![0]!,
      `"server_name ${
        names[0]
      }" is not supported: the gateway's "server:" field takes a name without blanks or quotes`,
    );
  } else sink.settings.serverName = names[0]!;

  let staticLocation: Location | undefined;
  let proxyLocation: Location | undefined;
  const exact: Location[] = [];
  for (const d of server.block!.filter((d) => d.name === "location")) {
    const [modifier, uri] = d.args.length === 2
      ? [d.args[0]!, d.args[1]!]
      : ["", d.args[0]!];
    if (!["", "=", "^~"].includes(modifier) || uri.startsWith("@")) {
      sink.emerg(
        d,
        `"location ${
          d.args.join(" ")
        }" is not supported: the gateway matches plain prefixes and error pages only`,
      );
    }
    const nested = d.block!.find((c) => c.name === "location");
    if (nested) sink.emerg(nested, "a nested location is not supported");
    const loc = { d, modifier, uri, levels: sink.levels(levels, d.block!) };
    const proxied = d.block!.some((c) => c.name === "proxy_pass");
    if (modifier === "=") exact.push(loc);
    else if (proxied) {
      if (proxyLocation) {
        sink.emerg(d, "a second proxied location is not supported");
      }
      proxyLocation = loc;
    } else if (uri === "/") staticLocation = loc;
    else {
      sink.emerg(
        d,
        `"location ${uri}" is not supported: the gateway serves one folder at / and forwards /api/`,
      );
    }
  }
  if (proxyLocation === undefined) {
    sink.emerg(
      server,
      'no "location /api/ { proxy_pass … }": the gateway always forwards /api/',
    );
  }
  const staticLevels = staticLocation?.levels ?? levels;
  mapStatic(sink, staticLevels);
  mapProxyLocation(sink, proxyLocation.d, proxyLocation.levels, upstreams);
  mapLogs(sink, staticLevels, proxyLocation.levels);
  mapErrorPages(sink, staticLevels, proxyLocation.levels, exact);
}

function mapListen(sink: Sink, server: Directive, levels: Levels): void {
  const listens = levels.get("listen") ?? [];
  const addresses: string[] = [];
  for (const d of listens) {
    const address = listenSetting(d.args[0]!);
    if (!address.ok) return sink.emerg(d, address.error);
    for (const param of d.args.slice(1)) {
      const verdict = listenParameter(param);
      if (verdict === "invalid") {
        return sink.emerg(d, `invalid parameter "${param}"`);
      }
      if (verdict === "emerg") {
        sink.emerg(d, `"listen … ${param}" is not supported by the gateway`);
      }
      if (verdict === "warn") {
        sink.warn(
          d,
          `"listen … ${param}" is ignored: it only tunes the socket`,
        );
      }
    }
    addresses.push(address.value);
  }
  // nginx's default is *:80 (NGX_HTTP_LISTEN without root is *:8000 on
  // Unix only; nginx for Windows listens on 80).
  if (addresses.length === 0) addresses.push("*:80");
  const [first, ...rest] = addresses;
  for (const [i, other] of rest.entries()) {
    const d = listens[i + 1]!;
    const port = (a: string) => a.slice(a.lastIndexOf(":") + 1);
    if (port(other) === port(first!) && /^\[::\]:/.test(other)) {
      sink.warn(
        d,
        `"listen ${
          d.args[0]
        }" is ignored: the gateway listens on IPv4 "${first}"`,
      );
    } else {
      sink.emerg(
        d,
        `a second "listen" address is not supported: the gateway listens on "${first}"`,
      );
    }
  }
  sink.settings.listen = first!;
  if (listens.length === 0) {
    sink.warn(server, 'no "listen": nginx\'s default "listen *:80" is used');
  }
}

function mapStatic(sink: Sink, levels: Levels): void {
  const s = sink.settings;
  const root = last(levels, "root");
  s.root = root === undefined
    ? prefixed(sink.prefix, "html")
    : sink.path(root, root.args[0]!);
  const indexes = levels.get("index") ?? [];
  const names = indexes.flatMap((d) => d.args);
  if (names.length > 0 && names[0] !== "index.html") {
    sink.emerg(
      indexes[0]!,
      `"index ${
        names.join(" ")
      }" is not supported: the gateway serves index.html`,
    );
  }
  if (names.length > 1) {
    sink.warn(
      indexes[0]!,
      `"index ${names.join(" ")}": the gateway looks for index.html only`,
    );
  }
  const tryFiles = last(levels, "try_files");
  if (tryFiles === undefined) s.spaFallback = "off";
  else if (tryFiles.args.join(" ") === "$uri $uri/ /index.html") {
    s.spaFallback = "on";
    sink.warn(
      tryFiles,
      '"try_files $uri $uri/ /index.html": the gateway answers 404, not index.html, for a missing file that looks like an asset (/x.png) or is not asked for as HTML',
    );
  } else {
    sink.emerg(
      tryFiles,
      `"try_files ${
        tryFiles.args.join(" ")
      }" is not supported: the gateway knows "try_files $uri $uri/ /index.html" only`,
    );
  }
  const notFound = last(levels, "log_not_found");
  if (notFound !== undefined) s.logNotFound = notFound.args[0]!.toLowerCase();
  const type = last(levels, "default_type");
  if (type !== undefined && type.args[0] !== "application/octet-stream") {
    sink.emerg(
      type,
      `"default_type ${
        type.args[0]
      }" is not supported: the gateway sends application/octet-stream`,
    );
  }
}
