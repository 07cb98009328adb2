/** How the request is read, from an nginx.conf onto the gateway's settings. */
import { deepStrictEqual, match } from "node:assert/strict";
import { resolve } from "node:path";
import { resolveConfig } from "../../src/config/config.ts";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { memoryIo } from "./_memory_io.ts";

const MAIN = "/n/conf/nginx.conf";

function conf(parts: { http?: string; server?: string; api?: string }): string {
  return `events {}\nhttp {\n${
    parts.http ?? ""
  }\n server {\n listen 80;\n server_name st;\n${
    parts.server ?? ""
  }\n location /api/ {\n proxy_pass http://10.0.0.5:8080/;\n${
    parts.api ?? ""
  }\n }\n }\n}\n`;
}

function load(text: string) {
  return loadNginxConf(MAIN, memoryIo({ [MAIN]: text }));
}

Deno.test("loadNginxConf() maps client_body_* , proxy_request_buffering and large_client_header_buffers", () => {
  const result = load(conf({
    http: "client_body_timeout 30s; large_client_header_buffers 8 16k;",
    api: "client_body_buffer_size 16k; client_body_temp_path body 1 2;" +
      "proxy_request_buffering off;",
  }));
  if (!result.ok) throw new Error(result.message);
  const config = resolveConfig(result.settings, {}, "/elsewhere");
  deepStrictEqual(
    [
      config.clientBodyTimeoutMs,
      config.clientBodyBufferSize,
      config.clientBodyTempPath,
      config.proxyRequestBuffering,
      config.largeClientHeaderBuffers,
    ],
    [30_000, 16_384, resolve("/n/body"), false, { number: 8, size: 16_384 }],
  );
  match(result.warnings.join("\n"), /client_body_temp_path body 1 2/);
});

Deno.test("loadNginxConf() without those directives keeps nginx's defaults", () => {
  const result = load(conf({}));
  if (!result.ok) throw new Error(result.message);
  const config = resolveConfig(result.settings, {}, "/elsewhere");
  deepStrictEqual(
    [
      config.clientBodyTimeoutMs,
      config.clientBodyBufferSize,
      config.proxyRequestBuffering,
      config.largeClientHeaderBuffers,
    ],
    [60_000, 8192, true, { number: 4, size: 8192 }],
  );
});

Deno.test("loadNginxConf() refuses bad request-reading values as nginx words them", () => {
  const cases: [string, RegExp][] = [
    [
      "large_client_header_buffers x 8k;",
      /"large_client_header_buffers" directive invalid value/,
    ],
    [
      "client_body_timeout 1x;",
      /"client_body_timeout" directive invalid value/,
    ],
    [
      "client_body_buffer_size 8q;",
      /"client_body_buffer_size" directive invalid value/,
    ],
  ];
  for (const [line, expected] of cases) {
    const result = load(conf({ http: line }));
    match(result.ok ? "accepted" : result.message, expected, line);
  }
});

Deno.test("resolveConfig() checks the request-reading settings", () => {
  const cases: [Record<string, string>, string][] = [
    [{ largeClientHeaderBuffers: "0 8k" }, "large-client-header-buffers"],
    [{ largeClientHeaderBuffers: "4 100" }, "large-client-header-buffers"],
    [{ largeClientHeaderBuffers: "4" }, "large-client-header-buffers"],
    [{ clientBodyBufferSize: "100" }, "client-body-buffer-size"],
    [{ clientBodyBufferSize: "1g" }, "client-body-buffer-size"],
    [{ clientBodyTimeout: "soon" }, "client-body-timeout"],
    [{ proxyRequestBuffering: "maybe" }, "proxy-request-buffering"],
  ];
  for (const [input, name] of cases) {
    let message = "accepted";
    try {
      resolveConfig(input, {}, "/gw");
    } catch (error) {
      message = (error as Error).message;
    }
    match(message, new RegExp(`^Cannot parse ${name} `), JSON.stringify(input));
  }
});
