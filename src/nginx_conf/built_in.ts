/**
 * The flags and the JSON config as an nginx.conf: the gateway's built-in
 * configuration, compiled by the same engine as a station's own file and
 * printed by `--print-config`. Every behaviour nginx lacks that the
 * built-in configuration has is written out here as a directive: the
 * `Cache-Control` policy (a `map` and `add_header`), the app's routes
 * (`try_files` to a named location), precompressed files (`gzip_static`),
 * kept-alive upstream connections and WebSocket (`keepalive`,
 * `proxy_http_version 1.1`, `Upgrade`/`Connection`), and the gateway's own
 * `station_*` directives (the status endpoint, the page shown while the
 * client app is not installed).
 *
 * @module
 */

import type { GatewayConfig } from "../config/mod.ts";
import { CONTENT_TYPES } from "../static/mod.ts";

/** The settings the built-in configuration is made of. */
export type BuiltInSettings = Pick<
  GatewayConfig,
  | "listen"
  | "upstreams"
  | "upstreamGroup"
  | "root"
  | "serverName"
  | "errorLog"
  | "accessLog"
  | "errorLogLevel"
  | "addForwardedHeaders"
  | "timeouts"
  | "proxyBufferSize"
  | "clientMaxBodySize"
  | "upstreamKeepalive"
  | "spaFallback"
  | "logNotFound"
  | "underscoresInHeaders"
  | "cachePolicy"
  | "statusPath"
  | "errorPages"
  | "apiPrefix"
  | "keepApiPrefix"
>;

/**
 * A value as the nginx lexer reads it back (ngx_conf_read_token): quoted
 * when it holds a blank, `;`, `{`, `}`, a quote, `#`, `\` or `$`, with `\`
 * and `"` escaped, so each comes back as written. For an argument nginx
 * reads variables in, {@linkcode literal}.
 */
function q(value: string): string {
  if (value !== "" && !/[\s;{}"'#\\$]/.test(value)) return value;
  return `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/**
 * The variable a literal `$` is written as. nginx has no escape for `$`
 * in a value it reads variables in (ngx_http_script_compile: `$name`,
 * `${name}`, `$1`…`$9`, any other `$` an error); its idiom is a `geo`
 * variable, whose values are text (ngx_http_geo), read as `${…}`.
 */
const DOLLAR = "station_dollar";

/**
 * An argument nginx reads variables in (`root`, `access_log`'s file, a
 * `map`'s value) as the text written: each `$` as `${station_dollar}`. A
 * path folds it back when the configuration is compiled (a constant, as
 * for nginx, opened and checked at start; nothing per request). A folder
 * such as `\\server\c$\app` (a Windows administrative share) is one.
 */
function literal(value: string): string {
  return q(value.replaceAll("$", `\${${DOLLAR}}`));
}

/** A fingerprinted asset name, as bundlers write them (`app.3f9a2c1b.js`). */
const FINGERPRINTED = "~[.-](?=[A-Za-z0-9_]*[0-9])[A-Za-z0-9_]{8,}\\.[^./]+$";

/** `$uri|$http_accept` of an app route: no extension, or a navigation. */
const APP_ROUTE = ["~^[^|]*/[^/.|]*\\|", "~\\|(.*,)?\\s*text/html"];

function listenText(listen: GatewayConfig["listen"]): string[] {
  // `localhost` is both loopbacks, as the flag has always meant.
  if (listen.hostname === "localhost") {
    return [`127.0.0.1:${listen.port}`, `[::1]:${listen.port}`];
  }
  const host = listen.hostname.includes(":")
    ? `[${listen.hostname}]`
    : listen.hostname;
  return [`${host}:${listen.port}`];
}

function ms(value: number): string {
  return `${value}ms`;
}

/**
 * Writes the built-in configuration for the settings.
 *
 * @param s The validated settings.
 * @returns nginx.conf text.
 *
 * @example Usage
 * ```ts
 * import { builtInConf } from "./built_in.ts";
 * import { DEFAULT_SETTINGS, resolveConfig } from "../config/mod.ts";
 * import { match } from "node:assert/strict";
 *
 * const text = builtInConf(resolveConfig(DEFAULT_SETTINGS, {}, "/opt/gw"));
 * match(text, /location \^~ \/api\/ \{/);
 * ```
 */
export function builtInConf(s: BuiltInSettings): string {
  const lines: string[] = [];
  const add = (indent: number, text: string) =>
    lines.push(`${"    ".repeat(indent)}${text}`);
  add(0, "# station-gateway's configuration from its flags and config file.");
  // Each setting comes back as written, or was refused by its parser
  // (`config/`) where nginx's reading of the directive would change it:
  // - error_log's file is text to nginx (ngx_log_set_log): q();
  // - root, access_log's file, the Cache-Control values read variables:
  //   literal() (a Cache-Control value with `$` is refused first: no
  //   directive is written with one, so it is a variable meant to be read);
  // - server_name: q(); a leading `~` or `.`, `*` and `$` are refused
  //   (patterns and `$hostname` to nginx);
  // - the status path, error pages, API prefix, upstream group and
  //   addresses are refused beyond URI and host characters, so none needs
  //   quoting, and they are written as they are.
  add(0, `error_log ${q(s.errorLog)} ${s.errorLogLevel};`);
  add(0, "http {");
  add(1, "types {");
  const byType = new Map<string, string[]>();
  for (const [ext, type] of Object.entries(CONTENT_TYPES)) {
    const bare = type.split(";")[0]!;
    byType.set(bare, [...(byType.get(bare) ?? []), ext]);
  }
  for (const [type, exts] of byType) add(2, `${type} ${exts.join(" ")};`);
  add(1, "}");
  add(1, "default_type application/octet-stream;");
  const written = [
    s.root,
    s.accessLog ?? "",
    s.cachePolicy.html,
    s.cachePolicy.fingerprinted,
    s.cachePolicy.other,
  ];
  if (written.some((v) => v.includes("$"))) {
    add(1, `geo $${DOLLAR} {`);
    add(2, `default ${q("$")};`);
    add(1, "}");
  }
  add(1, `access_log ${s.accessLog === null ? "off" : literal(s.accessLog)};`);
  if (s.statusPath !== null) add(1, `station_status ${q(s.statusPath)};`);
  // A WebSocket goes through only when the client's Connection names
  // upgrade (RFC 6455 §4.2.1); otherwise no Upgrade or Connection is sent
  // and the upstream connection is kept alive.
  add(1, 'map "$http_connection|$http_upgrade" $station_upgrade {');
  add(2, 'default "";');
  add(2, `${q("~*^(?:[^|]*[,\\s])?upgrade(?:[,\\s][^|]*)?\\|(.+)$")} $1;`);
  add(1, "}");
  add(1, "map $station_upgrade $station_connection {");
  add(2, "default upgrade;");
  add(2, '"" "";');
  add(1, "}");
  add(1, "map $uri $station_cache_control {");
  add(2, `default ${literal(s.cachePolicy.other)};`);
  add(2, `"~*\\.html?$" ${literal(s.cachePolicy.html)};`);
  add(2, `${q(FINGERPRINTED)} ${literal(s.cachePolicy.fingerprinted)};`);
  add(1, "}");
  if (s.spaFallback) {
    add(1, 'map "$uri|$http_accept" $station_app_route {');
    add(2, "default 0;");
    for (const re of APP_ROUTE) add(2, `${q(re)} 1;`);
    add(1, "}");
  }
  add(1, `upstream ${s.upstreamGroup} {`);
  for (const u of s.upstreams) {
    const params = [
      `max_fails=${u.maxFails}`,
      `fail_timeout=${ms(u.failTimeoutMs)}`,
      ...(u.backup ? ["backup"] : []),
    ];
    add(2, `server ${u.address.peer} ${params.join(" ")};`);
  }
  if (s.upstreamKeepalive > 0) add(2, `keepalive ${s.upstreamKeepalive};`);
  add(1, "}");
  add(1, "server {");
  for (const l of listenText(s.listen)) add(2, `listen ${l};`);
  add(2, `server_name ${q(s.serverName)};`);
  add(2, `root ${literal(s.root)};`);
  add(2, `client_max_body_size ${s.clientMaxBodySize};`);
  add(2, `log_not_found ${s.logNotFound ? "on" : "off"};`);
  if (s.underscoresInHeaders) add(2, "underscores_in_headers on;");
  add(2, "gzip_static on;");
  add(2, "gzip_vary on;");
  add(2, "station_default_page on;");
  add(2, "station_error_page_fallback on;");
  for (const [uri, codes] of errorPageLines(s.errorPages)) {
    add(2, `error_page ${codes.join(" ")} ${q(uri)};`);
    // A missing page keeps the error (station_error_page_fallback), unlogged.
    add(2, `location = ${q(uri)} { log_not_found off; }`);
  }
  // Hidden files (`.env`, `.git/`) are never served from the app folder.
  add(2, 'location ~ "(^|/)\\." { return 404; }');
  add(2, "location / {");
  add(3, s.spaFallback ? "try_files $uri $uri/ @app;" : "");
  add(3, "add_header Cache-Control $station_cache_control;");
  add(2, "}");
  if (s.spaFallback) {
    add(2, "location @app {");
    add(3, "if ($station_app_route) { rewrite ^ /index.html break; }");
    add(3, "add_header Cache-Control $station_cache_control;");
    add(2, "}");
  }
  add(2, `location ^~ /${s.apiPrefix}/ {`);
  add(3, `proxy_pass http://${s.upstreamGroup}${s.keepApiPrefix ? "" : "/"};`);
  add(3, "station_proxy_raw_uri on;");
  // nginx's `proxy_redirect default` names the group; the servers' own
  // URLs are what an upstream writes in Location.
  const publicPath = s.keepApiPrefix ? "/" : `/${s.apiPrefix}/`;
  for (const u of s.upstreams) {
    add(3, `proxy_redirect ${q(u.address.origin + "/")} ${q(publicPath)};`);
  }
  add(3, "proxy_http_version 1.1;");
  add(3, "proxy_set_header Host $station_peer;");
  add(3, "proxy_set_header Connection $station_connection;");
  add(3, "proxy_set_header Upgrade $station_upgrade;");
  if (s.addForwardedHeaders) {
    add(3, "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;");
    add(3, "proxy_set_header X-Forwarded-Proto $scheme;");
    add(3, "proxy_set_header X-Forwarded-Host $http_host;");
  }
  add(3, `proxy_connect_timeout ${ms(s.timeouts.connectMs)};`);
  add(3, `proxy_send_timeout ${ms(s.timeouts.sendMs)};`);
  add(3, `proxy_read_timeout ${ms(s.timeouts.readMs)};`);
  add(3, `proxy_buffer_size ${s.proxyBufferSize};`);
  add(2, "}");
  add(1, "}");
  add(0, "}");
  return lines.filter((l) => l.trim() !== "").join("\n") + "\n";
}

/** `error_page` lines: the codes of each page, in the order first given. */
function errorPageLines(
  pages: GatewayConfig["errorPages"],
): [string, number[]][] {
  const byUri = new Map<string, number[]>();
  for (const [code, uri] of pages) {
    byUri.set(uri, [...(byUri.get(uri) ?? []), code]);
  }
  return [...byUri];
}
