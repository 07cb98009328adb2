import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type ComplexValue, type RequestVars } from "../../src/engine/mod.ts";
import {
  checkLimitConn,
  checkLimitReq,
  type LimitConnConf,
  LimitConnZone,
  LimitReqZone,
  parseLimitConn,
  parseLimitConnZone,
  parseLimitReq,
} from "../../src/limits/mod.ts";

const VARS = {} as RequestVars;

function keyed(): { key: { value: string }; value: ComplexValue } {
  const key = { value: "10.0.0.1" };
  return {
    key,
    value: {
      text: "$binary_remote_addr",
      constant: null,
      usesCaptures: false,
      evaluate: () => key.value,
    },
  };
}

const ZONES: [string[], string | null][] = [
  [["zone=addr:10m"], null],
  [["zone=addr"], 'invalid zone size "zone=addr"'],
  [["zone=addr:1k"], 'zone "zone=addr:1k" is too small'],
  [["rate=1r/s"], 'invalid parameter "rate=1r/s"'],
  [[], '"limit_conn_zone" must have "zone" parameter'],
];
for (const [params, error] of ZONES) {
  Deno.test(`parseLimitConnZone() ${params.join(" ")}: nginx's answer`, () => {
    const r = parseLimitConnZone(keyed().value, params);
    strictEqual(r.ok ? null : r.error, error);
  });
}

const LIMITS: [string, string | null][] = [
  ["1", null],
  ["65535", null],
  ["0", 'invalid number of connections "0"'],
  ["x", 'invalid number of connections "x"'],
  ["65536", "connection limit must be less 65536"],
];
for (const [n, error] of LIMITS) {
  Deno.test(`parseLimitConn() addr ${n}: nginx's answer`, () => {
    const r = parseLimitConn("addr", n);
    strictEqual(r.ok ? null : r.error, error);
  });
}

function setup(size = 1024 * 1024, more: Partial<LimitConnConf> = {}) {
  const { key, value } = keyed();
  const zone = new LimitConnZone({ name: "addr", key: value, size });
  const conf: LimitConnConf = {
    limits: [{ conn: 2, zone }],
    logLevel: "error",
    status: 503,
    dryRun: false,
    ...more,
  };
  return { key, zone, conf };
}

Deno.test("limit_conn counts requests in progress per key and gives them back", () => {
  const { key, zone, conf } = setup();
  const a = checkLimitConn(conf, VARS);
  const b = checkLimitConn(conf, VARS);
  const c = checkLimitConn(conf, VARS);
  deepStrictEqual([a.status, b.status, c.status], [0, 0, 503]);
  deepStrictEqual(c.lines, [{
    level: "error",
    message: 'limiting connections by zone "addr"',
    withRequest: true,
  }]);
  strictEqual(c.limitStatus, "REJECTED");
  key.value = "10.0.0.2";
  strictEqual(checkLimitConn(conf, VARS).status, 0);
  key.value = "10.0.0.1";
  a.release();
  a.release(); // once only
  strictEqual(checkLimitConn(conf, VARS).status, 0);
  strictEqual(checkLimitConn(conf, VARS).status, 503);
  b.release();
  c.release();
  strictEqual(zone.size, 2);
});

Deno.test("limit_conn: an empty key is not limited, a key over 255 bytes is logged and skipped", () => {
  const { key, conf } = setup();
  key.value = "";
  for (let i = 0; i < 5; i++) strictEqual(checkLimitConn(conf, VARS).status, 0);
  key.value = "k".repeat(256);
  const d = checkLimitConn(conf, VARS);
  strictEqual(d.status, 0);
  strictEqual(
    d.lines[0]?.message,
    `the value of the "$binary_remote_addr" key is more than 255 bytes: "${key.value}"`,
  );
});

Deno.test("limit_conn: a full zone refuses new keys with nginx's slab line", () => {
  const { key, zone, conf } = setup(32 * 1024, { status: 429 });
  let refused = null;
  for (let i = 0; i < 1000 && refused === null; i++) {
    key.value = `10.1.${i >> 8}.${i & 255}`;
    const d = checkLimitConn(conf, VARS);
    if (d.status !== 0) refused = { d, i };
  }
  strictEqual(refused?.i, 384); // 24 KiB of 64-byte slots
  strictEqual(refused?.d.status, 429);
  deepStrictEqual(refused?.d.lines, [{
    level: "crit",
    message: 'ngx_slab_alloc() failed: no memory in limit_conn zone "addr"',
    withRequest: false,
  }]);
  strictEqual(zone.size, 384);
});

Deno.test("limit_conn dry run logs and lets the request go", () => {
  const { conf } = setup(1024 * 1024, { dryRun: true });
  checkLimitConn(conf, VARS);
  checkLimitConn(conf, VARS);
  const d = checkLimitConn(conf, VARS);
  strictEqual(d.status, 0);
  strictEqual(d.limitStatus, "REJECTED_DRY_RUN");
  strictEqual(
    d.lines[0]?.message,
    'limiting connections, dry run, by zone "addr"',
  );
});

Deno.test("limit_req: a key too large for its zone is nginx's alert and the limit's status", () => {
  const { key, value } = keyed();
  const zone = new LimitReqZone({
    name: "one",
    key: value,
    rate: 1000,
    size: 32 * 1024,
  }, () => 0);
  const rule = parseLimitReq(["zone=one"]);
  if (!rule.ok) throw new Error(rule.error);
  key.value = "k".repeat(30_000);
  const d = checkLimitReq({
    limits: [{ rule: rule.value, zone }],
    logLevel: "error",
    status: 503,
    dryRun: false,
  }, VARS);
  strictEqual(d.status, 503);
  deepStrictEqual(d.lines, [{
    level: "alert",
    message: 'could not allocate node in limit_req zone "one"',
    withRequest: false,
  }]);
});
