import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  type ComplexValue,
  constantValue,
  type RequestVars,
} from "../../src/engine/mod.ts";
import {
  checkLimitReq,
  type LimitReqConf,
  LimitReqZone,
  parseLimitReq,
  parseLimitReqZone,
  parseSize,
} from "../../src/limits/mod.ts";

const VARS = {} as RequestVars;

function zone(
  params: string[],
  now: () => number,
  key = "client",
): LimitReqZone {
  const spec = parseLimitReqZone(constantValue(key), params);
  if (!spec.ok) throw new Error(spec.error);
  return new LimitReqZone(spec.value, now);
}

function conf(
  limits: [LimitReqZone, string[]][],
  more: Partial<LimitReqConf> = {},
): LimitReqConf {
  return {
    limits: limits.map(([z, params]) => {
      const rule = parseLimitReq(params);
      if (!rule.ok) throw new Error(rule.error);
      return { rule: rule.value, zone: z };
    }),
    logLevel: "error",
    status: 503,
    dryRun: false,
    ...more,
  };
}

// [parameters, nginx's message or null]
const ZONES: [string[], string | null][] = [
  [["zone=one:10m", "rate=1r/s"], null],
  [["zone=one:32k", "rate=1r/s"], null],
  [["zone=one:32767", "rate=1r/s"], 'zone "zone=one:32767" is too small'],
  [["zone=one", "rate=1r/s"], 'invalid zone size "zone=one"'],
  [["zone=one:1g", "rate=1r/s"], 'invalid zone size "zone=one:1g"'],
  [["zone=one:10m", "rate=0r/s"], 'invalid rate "rate=0r/s"'],
  [["zone=one:10m", "rate=1r/h"], 'invalid rate "rate=1r/h"'],
  [["zone=one:10m", "rate=5"], null],
  [["zone=one:10m", "burst=5"], 'invalid parameter "burst=5"'],
  [["rate=1r/s"], '"limit_req_zone" must have "zone" parameter'],
];
for (const [params, error] of ZONES) {
  Deno.test(`parseLimitReqZone() ${params.join(" ")}: nginx's answer`, () => {
    const r = parseLimitReqZone(constantValue("k"), params);
    strictEqual(r.ok ? null : r.error, error);
  });
}

const RULES: [string[], string | null][] = [
  [["zone=one"], null],
  [["zone=one", "burst=5", "nodelay"], null],
  [["zone=one", "burst=0"], 'invalid burst value "burst=0"'],
  [["zone=one", "delay=x"], 'invalid delay value "delay=x"'],
  [["zone=one", "fast"], 'invalid parameter "fast"'],
  [["burst=5"], '"limit_req" must have "zone" parameter'],
];
for (const [params, error] of RULES) {
  Deno.test(`parseLimitReq() ${params.join(" ")}: nginx's answer`, () => {
    const r = parseLimitReq(params);
    strictEqual(r.ok ? null : r.error, error);
  });
}

Deno.test("parseSize() reads sizes as ngx_parse_size", () => {
  deepStrictEqual(
    ["10", "10k", "10K", "1m", "1M", "1g", "", "k", "-1", "1.5m"].map(
      parseSize,
    ),
    [10, 10240, 10240, 1048576, 1048576, null, null, null, null, null],
  );
});

// The leaky bucket, step by step: [ms since start, status, delay ms, line or null].
type Step = [number, number, number, string | null];

function run(c: LimitReqConf, clock: { now: number }, steps: Step[]): void {
  for (const [at, status, delay, line] of steps) {
    clock.now = at;
    const d = checkLimitReq(c, VARS);
    deepStrictEqual(
      [
        at,
        d.status,
        d.delayMs,
        d.lines.map((l) => `[${l.level}] ${l.message}`)[0] ?? null,
      ],
      [at, status, delay, line],
    );
  }
}

Deno.test("limit_req rate=2r/s: a second request within 500 ms is refused", () => {
  const clock = { now: 100_000 };
  const z = zone(["zone=one:1m", "rate=2r/s"], () => clock.now);
  run(conf([[z, ["zone=one"]]]), clock, [
    [100_000, 0, 0, null],
    [100_100, 503, 0, '[error] limiting requests, excess: 0.800 by zone "one"'],
    [100_480, 503, 0, '[error] limiting requests, excess: 0.040 by zone "one"'],
    [100_500, 0, 0, null], // drained: 1000 - 2 × 500 + 1000 would be 1.000 over
    [101_000, 0, 0, null],
  ]);
});

Deno.test("limit_req burst=2 delays the excess, nodelay passes it at once", () => {
  const clock = { now: 100_000 };
  const z = zone(["zone=one:1m", "rate=1r/s"], () => clock.now);
  run(conf([[z, ["zone=one", "burst=2"]]]), clock, [
    [100_000, 0, 0, null],
    [100_000, 0, 1000, '[warn] delaying request, excess: 1.000, by zone "one"'],
    [100_000, 0, 2000, '[warn] delaying request, excess: 2.000, by zone "one"'],
    [100_000, 503, 0, '[error] limiting requests, excess: 3.000 by zone "one"'],
    [100_520, 503, 0, '[error] limiting requests, excess: 2.480 by zone "one"'],
    [101_000, 0, 2000, '[warn] delaying request, excess: 2.000, by zone "one"'],
  ]);
  const z2 = zone(["zone=two:1m", "rate=1r/s"], () => clock.now);
  clock.now = 0;
  run(conf([[z2, ["zone=two", "burst=2", "nodelay"]]]), clock, [
    [200_000, 0, 0, null],
    [200_000, 0, 0, null],
    [200_000, 0, 0, null],
    [200_000, 503, 0, '[error] limiting requests, excess: 3.000 by zone "two"'],
  ]);
});

Deno.test("limit_req delay=1 delays only past the first excess request", () => {
  const clock = { now: 100_000 };
  const z = zone(["zone=one:1m", "rate=10r/s"], () => clock.now);
  run(conf([[z, ["zone=one", "burst=5", "delay=1"]]]), clock, [
    [100_000, 0, 0, null],
    [100_000, 0, 0, null],
    [100_000, 0, 100, '[warn] delaying request, excess: 2.000, by zone "one"'],
  ]);
});

Deno.test("limit_req_log_level and limit_req_status and dry run", () => {
  const clock = { now: 100_000 };
  const z = zone(["zone=one:1m", "rate=1r/s"], () => clock.now);
  run(
    conf([[z, ["zone=one", "burst=1"]]], { logLevel: "notice", status: 429 }),
    clock,
    [
      [100_000, 0, 0, null],
      [
        100_000,
        0,
        1000,
        '[info] delaying request, excess: 1.000, by zone "one"',
      ],
      [
        100_000,
        429,
        0,
        '[notice] limiting requests, excess: 2.000 by zone "one"',
      ],
    ],
  );
  const dry = conf([[z, ["zone=one"]]], { dryRun: true });
  const d = checkLimitReq(dry, VARS);
  strictEqual(d.status, 0);
  strictEqual(d.limitStatus, "REJECTED_DRY_RUN");
  strictEqual(
    d.lines[0]?.message,
    'limiting requests, dry run, excess: 2.000 by zone "one"',
  );
});

Deno.test("limit_req with two zones: an empty key skips its zone, the longest delay wins", () => {
  const clock = { now: 100_000 };
  const fast = zone(["zone=fast:1m", "rate=10r/s"], () => clock.now);
  const slow = zone(["zone=slow:1m", "rate=1r/s"], () => clock.now);
  const empty = zone(["zone=empty:1m", "rate=1r/s"], () => clock.now, "");
  const c = conf([[fast, ["zone=fast", "burst=5"]], [slow, [
    "zone=slow",
    "burst=5",
  ]], [empty, ["zone=empty"]]]);
  run(c, clock, [
    [100_000, 0, 0, null],
    [
      100_000,
      0,
      1000,
      '[warn] delaying request, excess: 1.000, by zone "slow"',
    ],
  ]);
  strictEqual(empty.size, 0);
});

/** A key read from a variable the test sets. */
function keyed(): { key: { value: string }; value: ComplexValue } {
  const key = { value: "" };
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

Deno.test("a limit_req zone is bounded by its size: a full zone drops its least recently used state", () => {
  const clock = { now: 100_000 };
  const { key, value } = keyed();
  // 32 KiB: nginx's smallest zone; a state of a short key takes a 128-byte slot.
  const z = new LimitReqZone(
    { name: "one", key: value, rate: 1000, size: 32 * 1024 },
    () => clock.now,
  );
  const c = conf([[z, ["zone=one"]]]);
  for (let i = 0; i < 1000; i++) {
    key.value = `10.0.${i >> 8}.${i & 255}`;
    strictEqual(checkLimitReq(c, VARS).status, 0);
  }
  strictEqual(z.size, 192);
  // The newest keys are kept with their state; the oldest went first.
  key.value = "10.0.3.231";
  strictEqual(checkLimitReq(c, VARS).status, 503);
  key.value = "10.0.0.0";
  strictEqual(checkLimitReq(c, VARS).status, 0);
  strictEqual(z.size, 192);
});

Deno.test("a limit_req zone drops states idle for a minute with nothing left to drain", () => {
  const clock = { now: 100_000 };
  const { key, value } = keyed();
  const z = new LimitReqZone(
    { name: "one", key: value, rate: 1000, size: 1024 * 1024 },
    () => clock.now,
  );
  const c = conf([[z, ["zone=one"]]]);
  for (const k of ["a", "b", "c"]) {
    key.value = k;
    checkLimitReq(c, VARS);
  }
  strictEqual(z.size, 3);
  clock.now += 61_000;
  key.value = "d";
  checkLimitReq(c, VARS);
  // At most two expire per new state, as ngx_http_limit_req_expire(ctx, 1).
  strictEqual(z.size, 2);
});
