/**
 * Peer choice over time beside a real nginx 1.22: nginx's smooth weighted
 * round-robin, `max_fails` and `fail_timeout`, side by side on the same
 * scripted sequence (statuses, error-log lines masked, access lines). Apart
 * from nginx_compat_test.ts because its pauses outlast nginx's whole-second
 * windows: the suite runs it beside the rest rather than after it.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { bothLogged, startNginx } from "../_nginx.ts";
import {
  closingPort,
  finalStatus as status,
  maskErrorLine,
  rawRequest,
  readHead,
  refusedPort,
  startGateway,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const ON_LINUX = suiteNeeds("upstream/peer_choice_nginx_test.ts", ["nginx"]);
const HOST = "Host: localhost:8081\r\n";

function post(path: string): string {
  return `POST ${path} HTTP/1.1\r\n${HOST}Content-Length: 2\r\nConnection: close\r\n\r\n{}`;
}

/** Error-log lines at error and warn, masked. */
function errors(lines: string[]): string[] {
  return lines.filter((l) => /\[(error|warn|crit|alert|emerg)\]/.test(l)).map(
    maskErrorLine,
  );
}

interface Run {
  statuses: string[];
  errors: string[];
  access: string[];
}

/** A step of a scripted sequence: a request, a pause, or closing a server. */
type Step = { request: string } | { waitMs: number } | { close: number };

/** Where each side's error lines name a server or the group, in order. */
function upstreamFields(lines: string[]): string[] {
  return errors(lines).map((l) =>
    `${l.match(/\[(\w+)\]/)![1]} ${l.match(/upstream: "([^"]+)"/)?.[1]}`
  );
}

/**
 * Runs nginx and the gateway in lockstep on the same servers (each step is
 * done on both before the next), so pauses and closings hit both at once.
 * `servers` holds `server` lines with `{N}` standing for the port of the
 * N-th accepting server.
 */
async function peerSequence(
  servers: (ports: number[]) => string[],
  accepting: number,
  steps: Step[],
): Promise<{ nginx: Run; gateway: Run }> {
  // On closing ports: one closed mid-sequence must refuse from then on, and
  // a port bound to 0 and closed went to another suite's server that bound
  // port 0 meanwhile (nginx's next request reached it).
  const ups = Array.from(
    { length: accepting },
    () =>
      startRawUpstream(async (conn) => {
        await readHead(conn);
        await writeText(
          conn,
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
        );
      }, { port: closingPort() }),
  );
  const closed = new Set<number>();
  try {
    const lines = servers(ups.map((u) => u.port));
    await using nginx = await startNginx({ servers: lines });
    await using gw = await startGateway({
      upstreamUrl: lines.map((s) => `http://${s}`),
    });
    const statuses: [string[], string[]] = [[], []];
    for (const step of steps) {
      if ("request" in step) {
        statuses[0].push(status(await rawRequest(nginx.port, step.request)));
        statuses[1].push(status(await rawRequest(gw.port, step.request)));
      } else if ("waitMs" in step) {
        await new Promise((r) => setTimeout(r, step.waitMs));
      } else {
        closed.add(step.close);
        await ups[step.close]![Symbol.asyncDispose]();
      }
    }
    return await bothLogged(
      nginx,
      gw,
      { nginx: statuses[0], gateway: statuses[1] },
      upstreamFields,
    );
  } finally {
    for (const [i, up] of ups.entries()) {
      if (!closed.has(i)) await up[Symbol.asyncDispose]();
    }
  }
}

// fail_timeout=1s against ngx_time()'s whole seconds: 2.2 s is past it
// wherever the failure fell within its second, and a burst of requests stays
// well inside it.
const PAST_FAIL_TIMEOUT = { waitMs: 2200 };
/** `n` requests whose paths number them from `first`, so each line says which request it came from. */
function requests(first: number, n: number): Step[] {
  return Array.from({ length: n }, (_, i) => ({
    request: post(`/api/r${first + i}`),
  }));
}

Deno.test(
  "nginx parity: a failed server is skipped on its turns within fail_timeout",
  ON_LINUX,
  async () => {
    // A window far longer than the burst: a slow machine cannot carry a
    // request past it.
    const dead = refusedPort();
    const { nginx, gateway } = await peerSequence(
      ([up]) => [
        `127.0.0.1:${dead} fail_timeout=60s`,
        `127.0.0.1:${up} fail_timeout=60s`,
      ],
      1,
      requests(1, 4),
    );
    deepStrictEqual(nginx.errors, [
      `error http://127.0.0.1:${dead}/r1`,
      `warn http://127.0.0.1:${dead}/r1`,
    ]);
    deepStrictEqual(gateway.errors, nginx.errors);
    deepStrictEqual(gateway.statuses, nginx.statuses);
    deepStrictEqual(gateway.access, nginx.access);
  },
);

Deno.test(
  "nginx parity: every server refused, then no live upstreams within fail_timeout",
  ON_LINUX,
  async () => {
    // A window far longer than the burst: a slow machine cannot carry a
    // request past it.
    const a = refusedPort();
    const b = refusedPort();
    const { nginx, gateway } = await peerSequence(
      () => [
        `127.0.0.1:${a} fail_timeout=60s`,
        `127.0.0.1:${b} fail_timeout=60s`,
      ],
      0,
      requests(1, 3),
    );
    const fa = (n: number) => `http://127.0.0.1:${a}/r${n}`;
    const fb = (n: number) => `http://127.0.0.1:${b}/r${n}`;
    deepStrictEqual(nginx.errors, [
      `error ${fa(1)}`,
      `warn ${fa(1)}`,
      `error ${fb(1)}`,
      `warn ${fb(1)}`,
      "error http://backend/r2",
      "error http://backend/r3",
    ]);
    deepStrictEqual(gateway.errors, nginx.errors);
    deepStrictEqual(gateway.statuses, ["502", "502", "502"]);
    deepStrictEqual(gateway.statuses, nginx.statuses);
  },
);

Deno.test(
  "nginx parity: no live upstreams after a failure when the rest are disabled",
  ON_LINUX,
  async () => {
    // Within a window far longer than the sequence (see above).
    const dead = refusedPort();
    const { nginx, gateway } = await peerSequence(
      ([up]) => [
        `127.0.0.1:${dead} fail_timeout=60s`,
        `127.0.0.1:${up} fail_timeout=60s`,
      ],
      1,
      [...requests(1, 1), { close: 0 }, ...requests(2, 2)],
    );
    // The second request: the accepting server now refuses, the dead one is
    // still disabled, a try is left: "no live upstreams", 502.
    match(nginx.errors.join("\n"), /error http:\/\/backend\/r2/);
    deepStrictEqual(gateway.errors, nginx.errors);
    deepStrictEqual(gateway.statuses, nginx.statuses);
  },
);

/** A sequence run beside nginx, then its checks on both sides' runs. */
interface Sequence {
  name: string;
  run(): Promise<{ nginx: Run; gateway: Run }>;
  check(runs: { nginx: Run; gateway: Run }): void;
}

/**
 * The sequences that pause past a 1 s fail_timeout (nginx's whole seconds:
 * `PAST_FAIL_TIMEOUT`). They run at once, each with its own nginx, gateway
 * and servers, so the file waits one pause rather than one a sequence;
 * each stays in lockstep on its own.
 */
const ACROSS: (() => Sequence)[] = [];

ACROSS.push(() => {
  // No request falls inside a fail_timeout window, where the choice would
  // hang on when the window ends (a second boundary in nginx, the
  // millisecond in the gateway): one request fails the dead server, the
  // pause outlasts the window wherever the failure fell in its second, and
  // the dead server's second failure ends the sequence. A slow machine
  // only lengthens the pause.
  const dead = refusedPort();
  return {
    name:
      "a failed server comes back on its round-robin turn after fail_timeout",
    run: () =>
      peerSequence(
        ([up]) => [
          `127.0.0.1:${dead} fail_timeout=1s`,
          `127.0.0.1:${up} fail_timeout=1s`,
        ],
        1,
        [...requests(1, 1), PAST_FAIL_TIMEOUT, ...requests(2, 3)],
      ),
    check({ nginx, gateway }) {
      const field = (n: number) => `http://127.0.0.1:${dead}/r${n}`;
      // As nginx 1.22 does: the failure took the dead server's effective
      // weight to 0 (ngx_http_upstream_free_round_robin_peer()), which comes
      // back by one a request, so its turn is the third request after.
      deepStrictEqual(nginx.errors, [
        `error ${field(1)}`,
        `warn ${field(1)}`,
        `error ${field(4)}`,
        `warn ${field(4)}`,
      ]);
      deepStrictEqual(gateway.errors, nginx.errors);
      deepStrictEqual(gateway.statuses, ["200", "200", "200", "200"]);
      deepStrictEqual(gateway.statuses, nginx.statuses);
      deepStrictEqual(gateway.access, nginx.access);
    },
  };
});

ACROSS.push(() => {
  // One request before the pause and one after, so none falls inside a
  // 1 s window (see above); "no live upstreams" within the window is
  // proven on a 60 s one below.
  const a = refusedPort();
  const b = refusedPort();
  return {
    name: "every server refused, then after fail_timeout the other order",
    run: () =>
      peerSequence(
        () => [
          `127.0.0.1:${a} fail_timeout=1s`,
          `127.0.0.1:${b} fail_timeout=1s`,
        ],
        0,
        [...requests(1, 1), PAST_FAIL_TIMEOUT, ...requests(2, 1)],
      ),
    check({ nginx, gateway }) {
      const fa = (n: number) => `http://127.0.0.1:${a}/r${n}`;
      const fb = (n: number) => `http://127.0.0.1:${b}/r${n}`;
      // As nginx 1.22 did on a real run: 19002 before 19001 after the pause.
      deepStrictEqual(nginx.errors, [
        `error ${fa(1)}`,
        `warn ${fa(1)}`,
        `error ${fb(1)}`,
        `warn ${fb(1)}`,
        `error ${fb(2)}`,
        `warn ${fb(2)}`,
        `error ${fa(2)}`,
        `warn ${fa(2)}`,
      ]);
      deepStrictEqual(gateway.errors, nginx.errors);
      deepStrictEqual(gateway.statuses, ["502", "502"]);
      deepStrictEqual(gateway.statuses, nginx.statuses);
    },
  };
});

ACROSS.push(() => {
  // One request before the pause and one after, so none falls inside a
  // 1 s window: the dead server's failure, then both servers tried (and
  // refusing) after its window.
  const dead = refusedPort();
  return {
    name:
      "servers disabled by their failures are tried again after fail_timeout",
    run: () =>
      peerSequence(
        ([up]) => [
          `127.0.0.1:${dead} fail_timeout=1s`,
          `127.0.0.1:${up} fail_timeout=1s`,
        ],
        1,
        [
          ...requests(1, 1),
          { close: 0 },
          PAST_FAIL_TIMEOUT,
          ...requests(2, 1),
        ],
      ),
    check({ nginx, gateway }) {
      deepStrictEqual(nginx.statuses, ["200", "502"]);
      // Both servers are named for the request after the pause.
      strictEqual(nginx.errors.filter((e) => e.endsWith("/r2")).length, 4);
      deepStrictEqual(gateway.errors, nginx.errors);
      deepStrictEqual(gateway.statuses, nginx.statuses);
    },
  };
});

/**
 * Backup servers, within one fail_timeout (a window far longer than the
 * burst, see above) and across it (one request before the pause and one
 * after, so none falls inside a 1 s window: the primaries are tried again
 * after it; both are then named for the request after the pause).
 */
const BACKUP_CASES: {
  when: string;
  window: string;
  steps: Step[];
  afterPause?: number;
}[] = [
  { when: "within", window: "60s", steps: requests(1, 4) },
  {
    when: "across",
    window: "1s",
    steps: [...requests(1, 1), PAST_FAIL_TIMEOUT, ...requests(2, 1)],
    afterPause: 4,
  },
];

/** A backup sequence: primaries `a` and `b`, the accepting server as backup. */
function backupSequence(
  { when, window, steps, afterPause }: (typeof BACKUP_CASES)[number],
): Sequence {
  const a = refusedPort();
  const b = refusedPort();
  return {
    name: `backup servers only when no primary is left, ${when} fail_timeout`,
    run: () =>
      peerSequence(
        ([up]) => [
          `127.0.0.1:${a} fail_timeout=${window}`,
          `127.0.0.1:${b} max_fails=2 fail_timeout=${window}`,
          `127.0.0.1:${up} backup`,
        ],
        1,
        steps,
      ),
    check({ nginx, gateway }) {
      if (afterPause !== undefined) {
        strictEqual(
          nginx.errors.filter((e) => e.endsWith("/r2")).length,
          afterPause,
        );
      }
      deepStrictEqual(gateway.errors, nginx.errors);
      deepStrictEqual(gateway.statuses, nginx.statuses);
      deepStrictEqual(gateway.access, nginx.access);
    },
  };
}

for (const backup of BACKUP_CASES) {
  if (backup.afterPause !== undefined) {
    ACROSS.push(() => backupSequence(backup));
    continue;
  }
  Deno.test(
    `nginx parity: backup servers only when no primary is left, ${backup.when} fail_timeout`,
    ON_LINUX,
    async () => {
      const sequence = backupSequence(backup);
      sequence.check(await sequence.run());
    },
  );
}

Deno.test(
  "nginx parity: sequences that pause past fail_timeout, side by side at once",
  ON_LINUX,
  async (t) => {
    // Settled, not all: a sequence that fails leaves the others to end
    // and close their servers before the test does.
    const sequences = ACROSS.map((make) => make());
    const runs = await Promise.allSettled(sequences.map((s) => s.run()));
    for (const [i, sequence] of sequences.entries()) {
      await t.step(sequence.name, () => {
        const run = runs[i]!;
        if (run.status === "rejected") throw run.reason;
        sequence.check(run.value);
      });
    }
  },
);
