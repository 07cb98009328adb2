import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseUpstreamServer } from "../../src/config/addresses.ts";
import { tryPeers } from "../../src/upstream/next_upstream.ts";
import {
  ipHashWalk,
  isAvailable,
  ngxTime,
  pickIpHashPeer,
  pickPeer,
  releasePeer,
  roundRobinState,
} from "../../src/upstream/peer_choice.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { upstreamErrorFromOs } from "../../src/upstream/error.ts";
import { UpstreamGroup } from "../../src/upstream/group.ts";

Deno.test("pickPeer() spreads choices by weight as nginx's smooth round-robin", () => {
  const cases: [number[], string][] = [
    [[1, 1], "abab"],
    [[1, 1, 1], "abcabc"],
    // The sequence nginx documents for weights 5, 1, 1 (ngx_http_upstream_get_peer).
    [[5, 1, 1], "aabacaa"],
    [[2, 1], "abaaba"],
  ];
  for (const [weights, expected] of cases) {
    const peers = weights.map((weight, i) => ({
      name: "abc"[i]!,
      rr: roundRobinState({ weight, maxFails: 1, failTimeoutMs: 10_000 }),
    }));
    const order = [...expected].map(() => pickPeer(peers, new Set(), 100)!.name)
      .join("");
    strictEqual(order, expected, `weights ${weights}`);
  }
});

Deno.test("releasePeer() counts failures and clears them only after a check", () => {
  const rr = roundRobinState({ maxFails: 3, failTimeoutMs: 10_000 });
  const peers = [{ rr }];
  // Chosen at t=100 (the first choice is a check: checked = 100).
  pickPeer(peers, new Set(), 100);
  strictEqual(releasePeer(rr, true, 100), false);
  // A success within fail_timeout is no check: the failure stays counted.
  pickPeer(peers, new Set(), 101);
  releasePeer(rr, false, 101);
  strictEqual(rr.fails, 1);
  strictEqual(releasePeer(rr, true, 102), false);
  strictEqual(releasePeer(rr, true, 103), true);
  strictEqual(isAvailable(rr, 113), false, "fail_timeout not over");
  strictEqual(isAvailable(rr, 114), true);
  // The check after fail_timeout succeeds: failures cleared.
  strictEqual(pickPeer(peers, new Set(), 114), peers[0]);
  releasePeer(rr, false, 114);
  strictEqual(rr.fails, 0);
  // weight 1 / max_fails 3 is 0 in nginx's integer division: no weight lost.
  strictEqual(rr.effectiveWeight, 1);
});

Deno.test("releasePeer() lowers the effective weight by weight / max_fails", () => {
  const cases: [number, number, number[]][] = [
    [1, 1, [0, 0]],
    [4, 2, [2, 0, 0]],
    [5, 2, [3, 1, 0]],
    [1, 0, [1, 1]],
  ];
  for (const [weight, maxFails, expected] of cases) {
    const rr = roundRobinState({ weight, maxFails, failTimeoutMs: 1000 });
    const seen = expected.map(() => {
      releasePeer(rr, true, 5);
      return rr.effectiveWeight;
    });
    deepStrictEqual(seen, expected, `weight=${weight} max_fails=${maxFails}`);
  }
});

Deno.test("ngxTime() truncates to whole seconds", () => {
  deepStrictEqual([0, 999, 1000, 12_345].map(ngxTime), [0, 0, 1, 12]);
});

/** One scripted request: when, and which servers refuse. */
interface Visit {
  at: number;
  refusing: string;
}

/**
 * Runs requests through `tryPeers` on a group whose clock and servers are
 * scripted: each server is a letter, a refusing one fails its attempt.
 * Returns, per request, the letters tried (`!` after a failure) and how it
 * ended.
 */
async function walk(lines: string[], visits: Visit[]): Promise<string[]> {
  let now = 0;
  const letters = new Map<number, string>();
  const group = new UpstreamGroup(
    "backend",
    lines.map((line, i) => {
      const spec = parseUpstreamServer(
        `http://127.0.0.1:${9001 + i} ${line}`.trim(),
      );
      letters.set(spec.address.port, "abcd"[i]!);
      return {
        spec,
        client: new UpstreamClient({
          hostname: spec.address.hostname,
          port: spec.address.port,
          timeouts: { connectMs: 1000, sendMs: 1000, readMs: 1000 },
        }),
      };
    }),
    () => now,
  );
  const out: string[] = [];
  for (const visit of visits) {
    now = visit.at * 1000;
    const seen: string[] = [];
    const outcome = await tryPeers(group, {
      method: "GET",
      upstreamPath: "/",
      streamedBody: false,
      onFailure: () => {},
    }, (peer) => {
      const letter = letters.get(peer.spec.address.port)!;
      if (visit.refusing.includes(letter)) {
        seen.push(`${letter}!`);
        return Promise.reject(
          upstreamErrorFromOs(
            new Error("(os error 111)"),
            "connecting to upstream",
            "linux",
          ),
        );
      }
      seen.push(letter);
      return Promise.resolve(letter);
    }, (value) => value);
    out.push(`${seen.join(" ")} ${outcome.kind}`.trim());
  }
  group.close();
  return out;
}

const at = (t: number, n: number, refusing: string): Visit[] =>
  Array.from({ length: n }, () => ({ at: t, refusing }));

Deno.test("UpstreamGroup visits servers in nginx's order over time", async (t) => {
  const cases: {
    name: string;
    lines: string[];
    visits: Visit[];
    expected: string[];
  }[] = [
    {
      name:
        "nginx 1.22 run: back on its turn, the 3rd request after fail_timeout",
      lines: ["", ""],
      visits: [...at(0, 2, "a"), ...at(1, 1, "a"), ...at(12, 4, "a")],
      expected: [
        "a! b ok",
        "b ok",
        "b ok",
        "b ok",
        "b ok",
        "a! b ok",
        "b ok",
      ],
    },
    {
      name: "nginx 1.22 run: every server refused, the other order after",
      lines: ["", ""],
      visits: [...at(0, 2, "ab"), ...at(11, 1, "ab")],
      expected: ["a! b! failed", "no-live", "b! a! failed"],
    },
    {
      name: "fail_timeout counts whole seconds, strictly more than it",
      lines: ["fail_timeout=2s", "fail_timeout=2s"],
      // Back at t=3 (3 - 0 > 2), then on its turn: the third choice.
      visits: [...at(0, 1, "a"), ...at(2, 2, ""), ...at(3, 3, "")],
      expected: ["a! b ok", "b ok", "b ok", "b ok", "b ok", "a ok"],
    },
    {
      name:
        "a failure with tries left and nothing available: no live upstreams",
      lines: ["", ""],
      visits: [...at(0, 1, "a"), ...at(0, 1, "ab")],
      expected: ["a! b ok", "b! no-live"],
    },
    {
      name: "backups only when no primary is left, and the request stays there",
      lines: ["", "", "backup", "backup"],
      visits: [...at(0, 1, "ab"), ...at(0, 2, "c"), ...at(20, 1, "abc")],
      expected: [
        "a! b! c ok",
        "d ok",
        "c! d ok",
        // Past fail_timeout every server is back; b's score is higher.
        "b! a! d ok",
      ],
    },
    {
      name: "max_fails=0 is never skipped and keeps its weight",
      lines: ["max_fails=0", ""],
      visits: at(0, 4, "a"),
      expected: ["a! b ok", "b ok", "a! b ok", "b ok"],
    },
    {
      name: "max_fails=2: disabled by the second failure",
      lines: ["max_fails=2", ""],
      visits: at(0, 5, "a"),
      expected: ["a! b ok", "b ok", "a! b ok", "b ok", "b ok"],
    },
    {
      name: "a single server is never skipped",
      lines: [""],
      visits: at(0, 3, "a"),
      expected: ["a! failed", "a! failed", "a! failed"],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      deepStrictEqual(await walk(c.lines, c.visits), c.expected);
    });
  }
});

Deno.test("UpstreamGroup never chooses a down server; a group of down servers has no live upstreams", () => {
  const group = (downs: boolean[]) =>
    new UpstreamGroup(
      "backend",
      downs.map((down, i) => {
        const spec = {
          ...parseUpstreamServer(`http://127.0.0.1:${9001 + i}`),
          down,
        };
        return {
          spec,
          client: { send: () => Promise.reject(), idleCount: 0, close() {} },
        };
      }),
    );
  const mixed = group([true, false]);
  for (let i = 0; i < 3; i++) {
    const choice = mixed.choose(new Set());
    strictEqual(choice.kind === "peer" && choice.peer.spec.address.port, 9002);
  }
  strictEqual(group([true]).choose(new Set()).kind, "no-live");
  strictEqual(group([true, true]).choose(new Set()).kind, "no-live");
});

Deno.test("pickIpHashPeer() follows ngx_http_upstream_get_ip_hash_peer's arithmetic", () => {
  const make = (down: boolean[], weights = [1, 1, 1]) =>
    ["a", "b", "c"].map((name, i) => ({
      name,
      rr: roundRobinState({
        maxFails: 1,
        failTimeoutMs: 10_000,
        weight: weights[i]!,
        down: down[i]!,
      }),
    }));
  /** [client, down, weights, chosen (null: round-robin's turn), hash, tries] */
  const cases: [
    number[] | null,
    boolean[],
    number[],
    string | null,
    number,
    number,
  ][] = [
    // 127.0.0.x: 89 → 3913 → 3199 → 4040; 4040 % 3 = 2.
    [[127, 0, 0, 1], [false, false, false], [1, 1, 1], "c", 4040, 0],
    // The last byte of an IPv4 address is not hashed.
    [[127, 0, 0, 200], [false, false, false], [1, 1, 1], "c", 4040, 0],
    // 4040 % 5 = 0 → a (weight 1), then b holds 1..3.
    [[127, 0, 0, 1], [false, false, false], [1, 3, 1], "a", 4040, 0],
    // c down: the hash goes on from 4040 (5510: c again, then 4957: b).
    [[127, 0, 0, 1], [false, false, true], [1, 1, 1], "b", 4957, 2],
    // All down: 21 tries, then round-robin's turn; the hash is kept.
    [[127, 0, 0, 1], [true, true, true], [1, 1, 1], null, 89, 21],
    // Not an IP address: three zero bytes.
    [null, [false, false, false], [1, 1, 1], "b", 295, 0],
  ];
  const got = cases.map(([client, down, weights]) => {
    const walk = ipHashWalk(client === null ? null : Uint8Array.from(client));
    const peer = pickIpHashPeer(make(down, weights), new Set(), 0, walk);
    return [peer?.name ?? null, walk.hash, walk.tries];
  });
  deepStrictEqual(
    got,
    cases.map(([, , , name, hash, tries]) => [name, hash, tries]),
  );
});
