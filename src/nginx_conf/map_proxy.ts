/**
 * The `/api/` location onto the gateway's settings: `proxy_pass` with
 * nginx's URI rule, the `upstream {}` group, the upstream timers, the body
 * limit and the headers sent upstream.
 *
 * @module
 */

import type { Directive } from "./parser.ts";
import { last, type Levels, type Sink } from "./sink.ts";
import {
  proxyTarget,
  sizeSetting,
  timeSetting,
  upstreamServer,
  upstreamUrl,
} from "./values.ts";

/** The location the gateway forwards; its prefix is removed upstream. */
export const PROXY_PREFIX = "/api/";

/**
 * Maps the forwarding location.
 *
 * @param sink Where settings and findings go.
 * @param location The `location /api/ { … }` directive.
 * @param levels The directives in effect inside it.
 * @param upstreams The `upstream {}` blocks by name.
 */
export function mapProxyLocation(
  sink: Sink,
  location: Directive,
  levels: Levels,
  upstreams: ReadonlyMap<string, Directive>,
): void {
  const uri = location.args[location.args.length - 1]!;
  if (!/^\/[A-Za-z0-9._~-]+\/$/.test(uri) || /^\/\.\.?\/$/.test(uri)) {
    sink.emerg(
      location,
      `"location ${uri}" with "proxy_pass" is not supported: the gateway forwards one prefix of one segment, like ${PROXY_PREFIX}`,
    );
  }
  for (const name of ["try_files", "error_page"]) {
    const d = location.block!.find((c) => c.name === name);
    if (d !== undefined) {
      sink.emerg(d, `"${name}" in "location ${uri}" is not supported`);
    }
  }
  const pass = last(levels, "proxy_pass")!;
  const target = proxyTarget(pass.args[0]!);
  if (!target.ok) return sink.emerg(pass, target.error);
  const { host, uri: passUri } = target.value;
  // ngx_http_proxy_pass: a URI part replaces the matched prefix; without
  // one the request's URI goes upstream as it came (replacing the prefix
  // with itself is the same).
  if (passUri !== null && passUri !== "/" && passUri !== uri) {
    sink.emerg(
      pass,
      `"proxy_pass ${
        pass.args[0]
      }" is not supported: the gateway replaces "${uri}" with "/" or forwards it unchanged`,
    );
  }
  if (uri !== PROXY_PREFIX) sink.settings.apiPrefix = uri;
  if (passUri !== "/") sink.settings.keepApiPrefix = true;
  const s = sink.settings;
  const keepalive = headers(sink, levels);
  const group = /:\d+$/.test(host) ? undefined : upstreams.get(host);
  if (group === undefined) {
    s.upstream = upstreamUrl(host);
    s.upstreamKeepalive = 0;
  } else {
    mapUpstreamGroup(sink, group, keepalive);
  }
  const times = [
    ["proxy_connect_timeout", "proxyConnectTimeout"],
    ["proxy_send_timeout", "proxySendTimeout"],
    ["proxy_read_timeout", "proxyReadTimeout"],
  ] as const;
  for (const [name, key] of times) {
    const d = last(levels, name);
    if (d === undefined) continue;
    const value = timeSetting(name, d.args[0]!);
    s[key] = value.ok ? value.value : sink.emerg(d, value.error);
  }
  const body = last(levels, "client_max_body_size");
  if (body !== undefined) {
    const value = sizeSetting(body.name, body.args[0]!);
    s.clientMaxBodySize = value.ok
      ? value.value
      : sink.emerg(body, value.error);
  }
  const redirect = last(levels, "proxy_redirect");
  if (redirect !== undefined && redirect.args.join(" ") !== "default") {
    sink.emerg(
      redirect,
      `"proxy_redirect ${
        redirect.args.join(" ")
      }" is not supported: the gateway rewrites as "proxy_redirect default"`,
    );
  }
}

/** What `proxy_set_header NAME VALUE` may say, by lower-case name. */
const HEADER_VALUES: Record<string, readonly string[]> = {
  host: ["$proxy_host"],
  "x-forwarded-for": ["$proxy_add_x_forwarded_for"],
  "x-forwarded-proto": ["$scheme"],
  "x-forwarded-host": ["$http_host", "$host"],
  connection: ["", "$connection_upgrade", "upgrade"],
  upgrade: ["$http_upgrade"],
};

/**
 * Checks the headers sent upstream and `proxy_http_version`.
 *
 * @returns Whether nginx would keep upstream connections alive (HTTP/1.1
 * and `Connection ""`, as the `keepalive` directive's documentation asks).
 */
function headers(sink: Sink, levels: Levels): boolean {
  const version = last(levels, "proxy_http_version");
  const v = version?.args[0] ?? "1.0";
  if (version !== undefined && v !== "1.0" && v !== "1.1") {
    sink.emerg(
      version,
      `invalid value "${v}" in "proxy_http_version" directive`,
    );
  }
  if (version !== undefined && v === "1.0") {
    sink.warn(
      version,
      '"proxy_http_version 1.0" is ignored: the gateway speaks HTTP/1.1 upstream',
    );
  }
  let connectionCleared = false;
  const forwarded = new Set<string>();
  for (const d of levels.get("proxy_set_header") ?? []) {
    const [name = "", value = ""] = d.args;
    const lower = name.toLowerCase();
    const allowed = HEADER_VALUES[lower];
    if (allowed === undefined || !allowed.includes(value)) {
      sink.emerg(
        d,
        `"proxy_set_header ${name} ${value}" is not supported: the gateway sends ${
          allowed === undefined
            ? "no such header"
            : `${name} as nginx's ${allowed.filter((a) => a).join(" or ")}`
        }`,
      );
    }
    if (lower === "connection" && value === "") connectionCleared = true;
    if (lower.startsWith("x-forwarded-")) forwarded.add(lower);
    if (lower === "x-forwarded-host" && value === "$host") {
      sink.warn(
        d,
        '"proxy_set_header X-Forwarded-Host $host": the gateway sends the Host header as the client sent it, port included',
      );
    }
  }
  if (forwarded.size > 0) {
    sink.settings.addForwardedHeaders = true;
    if (forwarded.size < 3) {
      const d = levels.get("proxy_set_header")![0]!;
      sink.warn(
        d,
        `"proxy_set_header X-Forwarded-*": the gateway sends all of X-Forwarded-For, -Proto and -Host, the file sets ${
          [...forwarded].join(", ")
        }`,
      );
    }
  }
  return v === "1.1" && connectionCleared;
}

function mapUpstreamGroup(
  sink: Sink,
  group: Directive,
  keepaliveWorks: boolean,
): void {
  const s = sink.settings;
  const name = group.args[0]!;
  const lines: string[] = [];
  const weights = new Set<number>();
  s.upstreamKeepalive = 0;
  for (const d of group.block!) {
    if (sink.generic(d)) continue;
    if (d.name === "server") {
      const server = upstreamServer(d.args);
      if (!server.ok) return sink.emerg(d, server.error);
      lines.push(server.value.setting);
      if (!server.value.backup) weights.add(server.value.weight);
    } else if (d.name === "keepalive") {
      const n = Number(d.args[0]);
      if (!/^\d{1,15}$/.test(d.args[0]!) || n === 0) {
        sink.emerg(d, `invalid value "${d.args[0]}" in "keepalive" directive`);
      }
      if (keepaliveWorks) s.upstreamKeepalive = Math.min(n, 1024);
      else {
        sink.warn(
          d,
          '"keepalive" is ignored: nginx keeps no upstream connection without "proxy_http_version 1.1" and "proxy_set_header Connection """',
        );
      }
    }
  }
  if (lines.length === 0) sink.emerg(group, "no servers are inside upstream");
  if (weights.size > 1) {
    sink.emerg(
      group,
      `"server … weight=" is not supported in "upstream ${name}": the gateway shares requests equally`,
    );
  }
  s.upstream = lines.length === 1 ? lines[0]! : lines;
  s.upstreamGroup = name;
  sink.warn(
    group,
    `"upstream ${name}": the gateway sends each server's own host:port as "Host" where nginx sends "${name}"`,
  );
}
