import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  probeHttp,
  type ProbeResult,
  UpstreamHealth,
} from "../../src/upstream/health.ts";
import {
  readHead,
  refusedPort,
  startRawUpstream,
  writeText,
} from "../_utils.ts";

/** A probe whose answers the test scripts, counting calls. */
function scriptedProbe(answers: boolean[]) {
  const calls: (() => void)[] = [];
  let n = 0;
  return {
    calls,
    get count() {
      return n;
    },
    probe: (): Promise<ProbeResult> => {
      const ok = answers[n++] ?? false;
      return new Promise((resolve) =>
        calls.push(() =>
          resolve(ok ? { ok, detail: "HTTP 200" } : { ok, reason: "refused" })
        )
      );
    },
  };
}

Deno.test("UpstreamHealth.check() shares the probe in flight and reuses a result younger than 1 s", async () => {
  let now = 10_000;
  const script = scriptedProbe([false, false, true]);
  const health = new UpstreamHealth({ probe: script.probe, now: () => now });
  // Ten callers at once: one probe.
  const waiting = Array.from({ length: 10 }, () => health.check());
  strictEqual(script.count, 1);
  now += 300;
  script.calls[0]!();
  const first = await Promise.all(waiting);
  strictEqual(new Set(first).size, 1);
  deepStrictEqual(first[0], {
    answers: false,
    detail: "refused",
    since: 10_300,
    checkedAt: 10_300,
  });
  // Younger than 1 s: reused, no probe.
  now += 999;
  strictEqual(await health.check(), first[0]);
  strictEqual(script.count, 1);
  // 1 s after the last result: a new probe; same state, so same "since".
  now += 1;
  const second = health.check();
  strictEqual(script.count, 2);
  script.calls[1]!();
  deepStrictEqual(await second, {
    answers: false,
    detail: "refused",
    since: 10_300,
    checkedAt: 11_300,
  });
  // The state flips: "since" moves to when it was seen.
  now += 5000;
  const third = health.check();
  script.calls[2]!();
  deepStrictEqual(await third, {
    answers: true,
    detail: "HTTP 200",
    since: 16_300,
    checkedAt: 16_300,
  });
});

Deno.test("UpstreamHealth.check() reports a probe that throws as not answering", async () => {
  const health = new UpstreamHealth({
    probe: () => Promise.reject(new Error("a bug")),
  });
  const report = await health.check();
  strictEqual(report.answers, false);
  match(report.detail, /a bug/);
});

Deno.test("probeHttp() counts only a real HTTP answer", async (t) => {
  const heads: string[] = [];
  const cases: {
    name: string;
    script: ((conn: Deno.Conn) => Promise<void>) | null;
    expected: RegExp;
    /** The probe's bound: generous, but for the case that waits it out. */
    timeoutMs?: number;
  }[] = [
    {
      name: "any status is an answer",
      script: async (conn) => {
        heads.push((await readHead(conn)) ?? "");
        await writeText(
          conn,
          "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
        );
      },
      expected: /^ok HTTP 404$/,
    },
    {
      name: "refused",
      script: null,
      expected:
        /^no connect\(\) failed \((111: Connection refused|10061: .*)\)$/,
    },
    {
      name: "accepted, never answered: half-dead is not healthy",
      // Silent until the probe gives up and closes.
      script: async (conn) => {
        await readHead(conn);
        await conn.read(new Uint8Array(1)).catch(() => null);
      },
      expected:
        /^no accepted the connection but sent no HTTP answer within 1000 ms$/,
      timeoutMs: 1000,
    },
    {
      name: "closed without a word",
      script: async () => {},
      expected: /^no closed the connection without an HTTP answer$/,
    },
    {
      name: "not HTTP",
      script: async (conn) => {
        await readHead(conn);
        await writeText(conn, "SSH-2.0-OpenSSH\r\n");
      },
      expected: /^no answered something that is not HTTP$/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const up = c.script ? startRawUpstream(c.script) : null;
      try {
        const port = up?.port ?? refusedPort();
        const result = await probeHttp({
          hostname: "127.0.0.1",
          port,
          host: `127.0.0.1:${port}`,
          timeoutMs: c.timeoutMs ?? 30_000,
        });
        match(
          result.ok ? `ok ${result.detail}` : `no ${result.reason}`,
          c.expected,
        );
      } finally {
        await up?.[Symbol.asyncDispose]();
      }
    });
  }
  // The request asked: GET / with the server's host:port, nothing else.
  match(heads[0]!, /^GET \/ HTTP\/1\.1\r\nHost: 127\.0\.0\.1:\d+\r\n/);
});
