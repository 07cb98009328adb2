/**
 * limit_req and limit_conn beside nginx 1.22: the same requests to nginx
 * and to a server on loopback that runs src/limits/, compared by status and
 * masked error lines. The rate is one request a minute, so nothing drains
 * while the test runs; the excess's digits are masked all the same.
 */

import { deepStrictEqual } from "node:assert/strict";
import {
  compileValue,
  type RequestVars,
  Variables,
} from "../../src/engine/mod.ts";
import {
  checkLimitConn,
  checkLimitReq,
  type LimitConnConf,
  LimitConnZone,
  type LimitReqConf,
  LimitReqZone,
  parseLimitConn,
  parseLimitConnZone,
  parseLimitReq,
  parseLimitReqZone,
} from "../../src/limits/mod.ts";
import { createLogger } from "../../src/log/mod.ts";
import { startNginx } from "../_nginx.ts";
import { maskErrorLine, rawRequest, startUpstream } from "../_utils.ts";

function mask(lines: string[]): string[] {
  return lines.map(maskErrorLine);
}

Deno.test("limit_req and limit_conn refuse and log as nginx 1.22", async () => {
  // The upstream holds /lc/ requests until told to answer.
  let release: () => void = () => {};
  let held = new Promise<void>((r) => release = r);
  let arrived: () => void = () => {};
  let arrival = new Promise<void>((r) => arrived = r);
  await using upstream = startUpstream(async () => {
    arrived();
    await held;
    return new Response("ok");
  });
  await using nginx = await startNginx({
    servers: [`127.0.0.1:${upstream.port}`],
    httpLines: [
      "limit_req_zone $remote_addr zone=one:1m rate=1r/m;",
      "limit_req_zone $remote_addr zone=two:1m rate=1r/m;",
      "limit_conn_zone $remote_addr zone=addr:1m;",
    ],
    serverLines: [
      "location /lr/ { limit_req zone=one burst=2 nodelay; try_files /none =204; }",
      "location /lrs/ { limit_req zone=two; limit_req_status 429; limit_req_log_level warn; try_files /none =204; }",
      `location /lc/ { limit_conn addr 1; proxy_pass http://127.0.0.1:${upstream.port}/; }`,
    ],
  });

  // The same settings for src/limits/.
  const scope = new Variables(new Map(), new Set());
  const key = compileValue("$remote_addr", scope);
  const reqZone = (params: string[]) => {
    const spec = parseLimitReqZone(key, params);
    if (!spec.ok) throw new Error(spec.error);
    return new LimitReqZone(spec.value);
  };
  const rule = (params: string[]) => {
    const r = parseLimitReq(params);
    if (!r.ok) throw new Error(r.error);
    return r.value;
  };
  const lr: LimitReqConf = {
    limits: [{
      rule: rule(["zone=one", "burst=2", "nodelay"]),
      zone: reqZone(["zone=one:1m", "rate=1r/m"]),
    }],
    logLevel: "error",
    status: 503,
    dryRun: false,
  };
  const lrs: LimitReqConf = {
    limits: [{
      rule: rule(["zone=two"]),
      zone: reqZone(["zone=two:1m", "rate=1r/m"]),
    }],
    logLevel: "warn",
    status: 429,
    dryRun: false,
  };
  const connSpec = parseLimitConnZone(key, ["zone=addr:1m"]);
  const connLimit = parseLimitConn("addr", "1");
  if (!connSpec.ok || !connLimit.ok) throw new Error("bad limit_conn");
  const lc: LimitConnConf = {
    limits: [{
      conn: connLimit.value.conn,
      zone: new LimitConnZone(connSpec.value),
    }],
    logLevel: "error",
    status: 503,
    dryRun: false,
  };
  const errorLines: string[] = [];
  const logger = createLogger({
    errorLog: { write: (l: string) => errorLines.push(l) },
    accessLog: null,
    level: "info",
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req, info) => {
      const client = (info.remoteAddr as Deno.NetAddr).hostname;
      const path = new URL(req.url).pathname;
      const vars = { remoteAddr: client } as RequestVars;
      const log = (lines: { level: never; message: string }[]) => {
        for (const l of lines) {
          logger.error({
            level: l.level,
            message: l.message,
            connection: 1,
            client,
            server: "localhost",
            request: `GET ${path} HTTP/1.1`,
            host: "station",
          });
        }
      };
      if (path.startsWith("/lc/")) {
        const d = checkLimitConn(lc, vars);
        log(d.lines as never);
        if (d.status !== 0) return new Response(null, { status: d.status });
        try {
          arrived();
          await held;
          return new Response("ok");
        } finally {
          d.release();
        }
      }
      const d = checkLimitReq(path.startsWith("/lrs/") ? lrs : lr, vars);
      log(d.lines as never);
      return new Response(null, { status: d.status || 204 });
    },
  );
  try {
    const head = (path: string) =>
      `GET ${path} HTTP/1.1\r\nHost: station\r\nConnection: close\r\n\r\n`;
    for (const port of [nginx.port, server.addr.port]) {
      const lines = () => port === nginx.port ? nginx.errorLines() : errorLines;
      const before = lines().length;
      const statuses: string[] = [];
      for (const path of ["/lr/", "/lr/", "/lr/", "/lr/", "/lrs/", "/lrs/"]) {
        const response = await rawRequest(port, head(path));
        statuses.push(response.slice(9, 12));
      }
      // limit_conn: one request held at the upstream, a second one refused.
      const first = rawRequest(port, head("/lc/"), 10_000);
      await arrival;
      statuses.push((await rawRequest(port, head("/lc/"))).slice(9, 12));
      release();
      statuses.push((await first).slice(9, 12));
      held = new Promise<void>((r) => release = r);
      arrival = new Promise<void>((r) => arrived = r);
      const seen = { statuses, lines: mask(lines().slice(before)) };
      if (port === nginx.port) {
        deepStrictEqual(seen.statuses, [
          "204",
          "204",
          "204",
          "503",
          "204",
          "429",
          "503",
          "200",
        ]);
        deepStrictEqual(seen.lines, [
          'TIME [error] PID#TID: *N limiting requests, excess: 3 by zone "one", client: 127.0.0.1, server: localhost, request: "GET /lr/ HTTP/1.1", host: "station"',
          'TIME [warn] PID#TID: *N limiting requests, excess: 1 by zone "two", client: 127.0.0.1, server: localhost, request: "GET /lrs/ HTTP/1.1", host: "station"',
          'TIME [error] PID#TID: *N limiting connections by zone "addr", client: 127.0.0.1, server: localhost, request: "GET /lc/ HTTP/1.1", host: "station"',
        ]);
      } else {
        deepStrictEqual(seen, {
          statuses: ["204", "204", "204", "503", "204", "429", "503", "200"],
          lines: mask(nginx.errorLines()).filter((l) => l.includes("limiting")),
        });
      }
    }
  } finally {
    release();
    await server.shutdown();
  }
});
