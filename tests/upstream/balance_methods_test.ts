/**
 * The arithmetic of `least_conn`, `hash` and `hash … consistent` as nginx
 * 1.22 does it, in tables (the side-by-side proof is
 * balance_methods_nginx_test.ts).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { crc32 } from "../../src/upstream/crc32.ts";
import {
  consistentPoints,
  consistentWalk,
  hashWalk,
  pickHashPeer,
} from "../../src/upstream/hash_choice.ts";
import {
  pickLeastConnPeer,
  pickLeastConnTier,
} from "../../src/upstream/least_conn.ts";
import { roundRobinState } from "../../src/upstream/peer_choice.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function peers(specs: { weight?: number; conns?: number; down?: boolean }[]) {
  return specs.map((spec, i) => {
    const rr = roundRobinState({
      weight: spec.weight ?? 1,
      maxFails: 1,
      failTimeoutMs: 10_000,
      down: spec.down ?? false,
    });
    rr.conns = spec.conns ?? 0;
    return { name: "abcdef"[i]!, rr };
  });
}

Deno.test("crc32() is nginx's CRC-32 (IEEE, reflected)", () => {
  const cases: [string, number][] = [
    ["", 0],
    ["a", 0xe8b7be43],
    ["123456789", 0xcbf43926],
  ];
  deepStrictEqual(
    cases.map(([text]) => crc32(bytes(text))),
    cases.map(([, crc]) => crc),
  );
});

Deno.test("consistentPoints() makes 160 points per weight from HOST\\0PORT and the previous point", () => {
  /** [servers, how many points, points that must be among them] */
  const cases: [{ server: string; weight: number }[], number, number[]][] = [
    // crc32("127.0.0.1\0" "8080" 00000000), then with that hash's bytes.
    [[{ server: "127.0.0.1:8080", weight: 1 }], 160, [1841993031, 2462559737]],
    // No port: the whole text is the host, the port empty.
    [[{ server: "backend", weight: 1 }], 160, [451348769]],
    // unix: the path is the host.
    [[{ server: "unix:/tmp/s.sock", weight: 1 }], 160, [1021627605]],
    [
      [
        { server: "127.0.0.1:8080", weight: 2 },
        { server: "backend", weight: 1 },
      ],
      480,
      [1841993031, 451348769],
    ],
  ];
  for (const [servers, count, among] of cases) {
    const points = consistentPoints(servers);
    strictEqual(points.hashes.length, count);
    strictEqual(points.servers.length, count);
    for (const hash of among) strictEqual(points.hashes.includes(hash), true);
    const sorted = [...points.hashes].sort((x, y) => x - y);
    deepStrictEqual([...points.hashes], sorted);
  }
});

Deno.test("consistentWalk() starts at the first point at or above the key's CRC-32", () => {
  const points = consistentPoints([{ server: "127.0.0.1:8080", weight: 1 }]);
  const hashes = points.hashes;
  for (const key of ["", "a", "user1", "/api/orders/12345"]) {
    const crc = crc32(bytes(key));
    const at = hashes.findIndex((h) => h >= crc);
    strictEqual(
      consistentWalk(points, key).hash,
      at === -1 ? hashes.length : at,
    );
  }
});

Deno.test("pickHashPeer() picks by (crc32([REHASH] KEY) >> 16) & 0x7fff summed, by weight", () => {
  // "user1": 3153 % 3 = 0 → a; then with "1" before it, 16616 % 3 = 2 → b.
  /** [key, tried, down, what is chosen] */
  const cases: [string, string[], string[], string][] = [
    ["user1", [], [], "a"],
    ["user1", ["a"], [], "b"],
    ["user1", [], ["a"], "b"],
    // An empty key is round-robin's: b, of weight 2, first.
    ["", [], [], "b"],
  ];
  for (const [key, tried, down, chosen] of cases) {
    const list = peers([{ weight: 1 }, { weight: 2 }]);
    for (const p of list) {
      if (down.includes(p.name)) p.rr = { ...p.rr, down: true };
    }
    const set = new Set(list.filter((p) => tried.includes(p.name)));
    strictEqual(pickHashPeer(list, set, 0, hashWalk(key))?.name, chosen, key);
  }
});

Deno.test("pickHashPeer() is round-robin's past 20 tries", () => {
  const list = peers([{ weight: 1 }, { weight: 2, down: true }]);
  const walk = hashWalk("user1");
  walk.tries = 21;
  strictEqual(pickHashPeer(list, new Set(), 0, walk)?.name, "a");
});

Deno.test("pickLeastConnPeer() takes the fewest conns per weight, ties by weighted round-robin", () => {
  /** [conns and weights, what is chosen] */
  const cases: [
    { weight?: number; conns?: number; down?: boolean }[],
    string,
  ][] = [
    [[{}, {}], "a"],
    [[{ conns: 1 }, {}], "b"],
    [[{ conns: 1 }, { conns: 1, weight: 2 }], "b"],
    // 2/2 against 3/1: a.
    [[{ conns: 2, weight: 2 }, { conns: 3 }], "a"],
    // Tied at 1/1 and 2/2: the smooth round-robin among them, b weighing 2.
    [[{ conns: 1 }, { conns: 2, weight: 2 }], "b"],
    [[{ conns: 0, down: true }, { conns: 5 }], "b"],
    [[{ conns: 3 }, { conns: 1 }, { conns: 1 }], "b"],
  ];
  for (const [specs, chosen] of cases) {
    strictEqual(
      pickLeastConnPeer(peers(specs), new Set(), 0)?.name,
      chosen,
      JSON.stringify(specs),
    );
  }
});

Deno.test("pickLeastConnTier() goes to the backups, and with none left keeps the failures (nginx 1.22)", () => {
  const [a, b, c] = peers([{}, {}, {}]);
  a!.rr.fails = 1;
  a!.rr.checked = 100;
  const tiers = { primaries: [a!, b!], backups: [c!] };
  strictEqual(pickLeastConnTier(tiers, new Set([b!]), 100, false), c);
  strictEqual(pickLeastConnTier(tiers, new Set([b!, c!]), 100, false), null);
  strictEqual(a!.rr.fails, 1);
});

Deno.test("hashWalk() hashes a key's bytes as nginx holds them: a byte that is not UTF-8 is itself", () => {
  // [the key as a variable holds it, its bytes]
  const table: [string, number[]][] = [
    ["/a", [0x2f, 0x61]],
    ["/é", [0x2f, 0xc3, 0xa9]],
    ["/a\udcffb", [0x2f, 0x61, 0xff, 0x62]],
  ];
  for (const [key, bytes] of table) {
    deepStrictEqual([...hashWalk(key).key], bytes, JSON.stringify(key));
  }
});
