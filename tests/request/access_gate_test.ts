/**
 * AccessGate: the preaccess and access phases in nginx's order, each limit
 * once per request, a delay waited out (or cut short when the client
 * leaves), and the lines each step asks for.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  AccessGate,
  type AccessState,
  endAccess,
  newAccessState,
} from "../../src/request/access_gate.ts";
import {
  AccessList,
  parseAccessRule,
  PasswordChecker,
} from "../../src/access/mod.ts";
import { constantValue, type LocationConf } from "../../src/engine/mod.ts";
import {
  LimitConnZone,
  LimitReqZone,
  parseLimitConnZone,
  parseLimitReq,
  parseLimitReqZone,
} from "../../src/limits/mod.ts";
import { createLogger } from "../../src/log/mod.ts";
import { locationConf } from "../_location_conf.ts";
import { requestVars } from "../engine/_conf.ts";

function reqZone(rate: string, now: () => number): LimitReqZone {
  const spec = parseLimitReqZone(constantValue("k"), ["zone=one:1m", rate]);
  if (!spec.ok) throw new Error(spec.error);
  return new LimitReqZone(spec.value, now);
}

function limitReq(
  zone: LimitReqZone,
  params: string[],
): LocationConf["limitReq"] {
  const rule = parseLimitReq(["zone=one", ...params]);
  if (!rule.ok) throw new Error(rule.error);
  return {
    limits: [{ rule: rule.value, zone }],
    logLevel: "error",
    status: 503,
    dryRun: false,
  };
}

function connZone(): LimitConnZone {
  const spec = parseLimitConnZone(constantValue("k"), ["zone=addr:1m"]);
  if (!spec.ok) throw new Error(spec.error);
  return new LimitConnZone(spec.value);
}

function gate() {
  const logged: string[] = [];
  const logger = createLogger({
    errorLog: { write: (l: string) => logged.push(l) },
    accessLog: null,
    level: "info",
  });
  return { gate: new AccessGate(new PasswordChecker(), logger), logged };
}

function request(signal = new AbortController().signal) {
  const lines: string[] = [];
  const state: AccessState = newAccessState();
  return {
    lines,
    state,
    facts: {
      vars: requestVars("/x"),
      authorization: null,
      signal,
      log: (e: { level: string; message: string }) =>
        lines.push(`[${e.level}] ${e.message}`),
      state,
      subrequest: false,
    },
  };
}

Deno.test("AccessGate runs limit_req before limit_conn, then allow/deny, each limit once per request", async () => {
  const { gate: g } = gate();
  const now = 0;
  const zone = reqZone("rate=1r/m", () => now);
  const conn = connZone();
  const deny = parseAccessRule("deny", "all");
  if (!deny.ok) throw new Error(deny.error);
  const conf = locationConf({
    limitReq: limitReq(zone, []),
    limitConn: {
      limits: [{ conn: 1, zone: conn }],
      logLevel: "error",
      status: 503,
      dryRun: false,
    },
    accessRules: new AccessList([deny.rule]),
  });
  const first = request();
  const refused = await g.run(conf, first.facts);
  strictEqual(refused?.code, 403);
  deepStrictEqual(first.lines, ["[error] access forbidden by rule"]);
  strictEqual(first.state.limitReqDone, true);
  strictEqual(conn.size, 1);
  // The same request in another location (an internal redirect): no limit again.
  const again = await g.run(conf, first.facts);
  strictEqual(again?.code, 403);
  strictEqual(conn.size, 1);
  first.state.release?.();
  strictEqual(conn.size, 0);
  // A second request: limit_req refuses first, limit_conn is not counted.
  const second = request();
  const busy = await g.run(conf, second.facts);
  strictEqual(busy?.code, 503);
  deepStrictEqual(second.lines, [
    '[error] limiting requests, excess: 1.000 by zone "one"',
  ]);
  strictEqual(conn.size, 0);
  strictEqual(second.state.release, null);
});

Deno.test("AccessGate waits out a limit_req delay, logged one level lower, and stops waiting when the client leaves", async () => {
  const { gate: g } = gate();
  const now = 0;
  // 1000 r/s: the second request's excess of one request is 1 ms.
  const conf = locationConf({
    limitReq: limitReq(reqZone("rate=1000r/s", () => now), ["burst=5"]),
  });
  strictEqual(await g.run(conf, request().facts), null);
  const delayed = request();
  strictEqual(await g.run(conf, delayed.facts), null);
  deepStrictEqual(delayed.lines, [
    '[warn] delaying request, excess: 1.000, by zone "one"',
  ]);
  // 1000 ms of delay, cut short by the client going away: finalized with
  // 499 (ngx_http_test_reading), not let through.
  const slow = locationConf({
    limitReq: limitReq(reqZone("rate=1r/s", () => now), ["burst=5"]),
  });
  strictEqual(await g.run(slow, request().facts), null);
  const leaving = new AbortController();
  const left = request(leaving.signal);
  const waiting = g.run(slow, left.facts);
  leaving.abort();
  strictEqual((await waiting)?.code, 499);
  deepStrictEqual(left.lines, [
    '[warn] delaying request, excess: 1.000, by zone "one"',
    "[info] client prematurely closed connection",
  ]);
});

Deno.test("AccessGate: a subrequest shares its main request's limits, has no access phase, and gives back what it takes after the main request ended", async () => {
  const { gate: g } = gate();
  const deny = parseAccessRule("deny", "all");
  if (!deny.ok) throw new Error(deny.error);
  const conn = connZone();
  const conf = locationConf({
    limitConn: {
      limits: [{ conn: 1, zone: conn }],
      logLevel: "error",
      status: 503,
      dryRun: false,
    },
    accessRules: new AccessList([deny.rule]),
  });
  // Each row: a subrequest of a main request in the given state; what the
  // gate answers, and the count held after it and after the main ended.
  const rows: {
    what: string;
    ended: boolean;
    code: number | undefined;
    held: number;
    heldAfterEnd: number;
  }[] = [
    {
      what: "while the main request runs: counted, held until it ends",
      ended: false,
      code: undefined,
      held: 1,
      heldAfterEnd: 0,
    },
    {
      what: "after the main request ended: given back at once",
      ended: true,
      code: undefined,
      held: 0,
      heldAfterEnd: 0,
    },
  ];
  for (const row of rows) {
    const main = request();
    if (row.ended) endAccess(main.state);
    const sub = { ...main.facts, subrequest: true };
    const answer = await g.run(conf, sub);
    strictEqual(answer?.code, row.code, row.what);
    strictEqual(conn.size, row.held, row.what);
    // A second subrequest of the same page: not counted again.
    strictEqual((await g.run(conf, sub))?.code, row.code, row.what);
    strictEqual(conn.size, row.held, row.what);
    endAccess(main.state);
    strictEqual(conn.size, row.heldAfterEnd, row.what);
    deepStrictEqual(main.lines, [], row.what);
  }
  // The main request itself is refused by the access phase.
  const main = request();
  strictEqual((await g.run(conf, main.facts))?.code, 403);
  endAccess(main.state);
  strictEqual(conn.size, 0);
});
