/**
 * The usage text `--help` prints.
 *
 * @module
 */

import { DEFAULT_SETTINGS } from "./settings_input.ts";
import { LOG_LEVELS } from "../log/mod.ts";

/**
 * The usage text printed by `--help`.
 *
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { formatUsage } from "./usage.ts";
 * import { match } from "node:assert/strict";
 *
 * match(formatUsage(), /--upstream/);
 * ```
 */
export function formatUsage(): string {
  const d = DEFAULT_SETTINGS;
  return `station-gateway: serves a client app and forwards /api/ to an upstream

USAGE:
  station-gateway [OPTIONS]
  station-gateway task install|remove|status [...]   (Windows scheduled task;
                                                      see: task --help)

OPTIONS:
  --listen [HOST:]PORT     Where to listen (default: ${d.listen}, on 127.0.0.1 and ::1;
                           give *:PORT or 0.0.0.0:PORT to accept other machines)
  --upstream URL [PARAMS]  Where /api/ goes: http://host[:port] (default:
                           ${d.upstream}; port 8080 when omitted). Give it
                           again for failover, as nginx's server lines:
                           --upstream "http://10.0.0.5" --upstream "http://127.0.0.1 backup"
                           PARAMS: backup, max_fails=N (1), fail_timeout=T (10s)
  --upstream-group NAME    Name in "no live upstreams" lines (default: ${d.upstreamGroup})
  --root DIR               The client-app folder (default: ${d.root})
  --status-path PATH|off   JSON counters at PATH, for loopback clients only,
                           like nginx stub_status (default: off)
  --spa-fallback on|off    App routes with no file get index.html (default: on)
  --log-not-found on|off   Log missing files as nginx does (default: on)
  --underscores-in-headers on|off  Pass request fields with "_" in their
                           names, as nginx's underscores_in_headers (default: off)
  --cache-html VALUE       Cache-Control for HTML (default: ${d.cacheHtml})
  --cache-fingerprinted V  Cache-Control for app.3f9a2c1b.js-style files
                           (default: ${d.cacheFingerprinted})
  --cache-other VALUE      Cache-Control for other files (default: ${d.cacheOther})
  --error-page "CODES /PATH"|off  Answer the gateway's own errors with a file
                           from the root, status kept, as nginx's error_page;
                           repeat for more (default: "${d.errorPage}";
                           the built-in page when the file is missing)
  --server-name NAME       The "server:" field of error-log lines (default: ${d.serverName})
  --error-log FILE         The error log (default: ${d.errorLog})
  --access-log FILE|off    The access log, nginx "combined" (default: ${d.accessLog})
  --error-log-level LEVEL  ${
    LOG_LEVELS.join(", ")
  } (default: ${d.errorLogLevel})
  --add-forwarded-headers  Send X-Forwarded-For, -Proto and -Host upstream
  --api-prefix /SEGMENT/   The location forwarded upstream (default: ${d.apiPrefix})
  --keep-api-prefix        Forward the prefix too, as nginx's proxy_pass without
                           a URI part; by default it is replaced by /
  --log-max-size SIZE      Rotate a log before it exceeds SIZE, e.g. 16m; 0 = never
                           (default: ${d.logMaxSize})
  --log-keep N             Rotated files kept per log (default: ${d.logKeep})
  --proxy-connect-timeout T  Connecting to the upstream (default: ${d.proxyConnectTimeout})
  --proxy-send-timeout T   Between two writes to the upstream (default: ${d.proxySendTimeout})
  --proxy-read-timeout T   Between two reads from the upstream (default: ${d.proxyReadTimeout})
  --proxy-buffer-size SIZE  Largest upstream response head; a bigger one is a 502
                           (default: ${d.proxyBufferSize})
  --client-max-body-size SIZE  Largest request body, 0 = no limit (default: ${d.clientMaxBodySize})
  --client-body-timeout T  Between two reads of a request body; 408 after
                           (default: ${d.clientBodyTimeout})
  --client-body-buffer-size SIZE  A request body kept in memory; a larger one
                           goes to a file (default: ${d.clientBodyBufferSize})
  --client-body-temp-path DIR  The folder for those files
                           (default: ${d.clientBodyTempPath})
  --proxy-request-buffering on|off  Read the whole body before the upstream
                           is contacted (default: ${d.proxyRequestBuffering})
  --large-client-header-buffers "N SIZE"  Longest request line and header line
                           (SIZE), header buffers (N) (default: ${d.largeClientHeaderBuffers})
  --upstream-keepalive N   Idle upstream connections kept; 0 = a new connection
                           per request (default: ${d.upstreamKeepalive})
  -c, --config FILE        JSON file with the same settings in camelCase
                           (e.g. {"upstream": "http://10.0.0.5"}); flags override it
  --nginx-conf FILE        Run from a station's nginx.conf, e.g.
                           C:\\nginx\\conf\\nginx.conf: paths in it start at the folder
                           above conf, as for nginx; --config and flags override it
  --print-config           Print the configuration as nginx.conf text (as
                           nginx -T), then exit
  -t, --check              Check the configuration, log files and port, then
                           exit 0 or 1 with the reason (like nginx -t)
  -h, --help               Print this help
  -V, --version            Print the version

Relative paths start from the executable's folder (the project folder under
"deno run"), never from the working directory.
`;
}
