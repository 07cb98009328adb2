import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseUpstreamServer } from "../../src/config/addresses.ts";
import {
  type AttemptFailure,
  tryPeers,
  upstreamField,
} from "../../src/upstream/next_upstream.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import {
  UpstreamError,
  upstreamErrorFromOs,
  upstreamTimeout,
} from "../../src/upstream/error.ts";
import { UpstreamGroup } from "../../src/upstream/group.ts";
import { readNextUpstream } from "../../src/upstream/try_next.ts";

const refused = () =>
  upstreamErrorFromOs(
    new Error("Connection refused (os error 111)"),
    "connecting to upstream",
    "linux",
  );
const readTimeout = () =>
  upstreamTimeout("reading response header from upstream", "linux");
const invalidHeader = () =>
  new UpstreamError("upstream sent invalid header", {
    kind: "invalid-response",
    action: "reading response header from upstream",
  });

/**
 * Two servers, `a` and `b`, whose clients are never used: the attempts are
 * scripted, so nothing leaves the process.
 */
function twoServers(): UpstreamGroup {
  const server = (url: string) => {
    const spec = parseUpstreamServer(url);
    const client = new UpstreamClient({
      hostname: spec.address.hostname,
      port: spec.address.port,
      timeouts: { connectMs: 1000, sendMs: 1000, readMs: 1000 },
    });
    return { spec, client };
  };
  return new UpstreamGroup("backend", [
    server("http://127.0.0.1:9001"),
    server("http://127.0.0.1:9002"),
  ]);
}

type Script = (UpstreamError | "ok" | "invalid")[];

Deno.test("tryPeers() moves to the next server only when nginx would", async (t) => {
  const cases: {
    name: string;
    method: string;
    streamedBody?: boolean;
    script: Script;
    outcome: string;
    reports: string[];
  }[] = [
    {
      name: "first server answers",
      method: "POST",
      script: ["ok"],
      outcome: "ok from 9001",
      reports: [],
    },
    {
      name: "refused POST goes on: it was never sent",
      method: "POST",
      script: [refused(), "ok"],
      outcome: "ok from 9002",
      reports: ["connect() failed (111: Connection refused) 9001 disabled"],
    },
    {
      name: "a POST that timed out waiting is not sent twice",
      method: "POST",
      script: [readTimeout()],
      outcome: "failed: upstream timed out",
      reports: ["upstream timed out (110: Connection timed out) 9001 disabled"],
    },
    {
      name: "a GET that timed out goes on",
      method: "GET",
      script: [readTimeout(), "ok"],
      outcome: "ok from 9002",
      reports: ["upstream timed out (110: Connection timed out) 9001 disabled"],
    },
    {
      name: "a streamed body cannot be sent again",
      method: "PUT",
      streamedBody: true,
      script: [readTimeout()],
      outcome: "failed: upstream timed out",
      reports: ["upstream timed out (110: Connection timed out) 9001 disabled"],
    },
    {
      name: "every server refused: the last failure decides",
      method: "GET",
      script: [refused(), refused()],
      outcome: "failed: connect() failed",
      reports: [
        "connect() failed (111: Connection refused) 9001 disabled",
        "connect() failed (111: Connection refused) 9002 disabled",
      ],
    },
    {
      name: "the client left: not counted against the server",
      method: "GET",
      script: [UpstreamError.clientClosed()],
      outcome: "failed: client prematurely closed connection",
      reports: [
        "client prematurely closed connection, so upstream connection is closed too 9001",
      ],
    },
    {
      name: "an answer accept() refuses is that server's failure",
      method: "GET",
      script: ["invalid"],
      outcome: "failed: upstream sent invalid header",
      reports: ["upstream sent invalid header 9001 disabled"],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const group = twoServers();
      const reports: string[] = [];
      const told: AttemptFailure[] = [];
      let call = 0;
      const outcome = await tryPeers(group, {
        method: c.method,
        upstreamPath: "/loginms",
        streamedBody: c.streamedBody ?? false,
        onFailure: (failure) => told.push(failure),
      }, (peer) => {
        const step = c.script[call++]!;
        return step instanceof UpstreamError
          ? Promise.reject(step)
          : Promise.resolve({ step, port: peer.spec.address.port });
      }, ({ step, port }) => {
        if (step === "invalid") throw invalidHeader();
        return `ok from ${port}`;
      });
      // Each failure is told as it happens, and is in the result too.
      deepStrictEqual(told, [...outcome.failures]);
      for (const { error, upstream, disabled } of told) {
        const os = error.osError
          ? ` (${error.osError.code}: ${error.osError.text})`
          : "";
        const port = upstream.match(/:(\d+)\//)![1];
        reports.push(
          `${error.message}${os} ${port}${disabled ? " disabled" : ""}`,
        );
      }
      const seen = outcome.kind === "ok"
        ? outcome.value
        : outcome.kind === "failed"
        ? `failed: ${outcome.error.message}`
        : "no-live";
      strictEqual(seen.startsWith(c.outcome), true, seen);
      deepStrictEqual(reports, c.reports);
      strictEqual(call, c.script.length, "attempts made");
      for (const p of group.peers) p.client.close();
    });
  }
});

interface Answer {
  status: number;
  port: number;
}

Deno.test("tryPeers() drops an answer whose status the location names, while tries remain", async (t) => {
  const http502 = readNextUpstream(["http_502"], { module: "proxy" }).mask;
  /** [name, method, streamed body, tries bound, statuses answered, outcome, dropped] */
  const cases: [string, string, boolean, number, number[], string, string[]][] =
    [
      ["502 then 200", "GET", false, 0, [502, 200], "200 from 9002", [
        "502 9001 disabled",
      ]],
      [
        "the last server's answer stands",
        "GET",
        false,
        0,
        [502, 502],
        "502 from 9002",
        [
          "502 9001 disabled",
        ],
      ],
      ["a POST's answer stands", "POST", false, 0, [502], "502 from 9001", []],
      [
        "a streamed body's answer stands",
        "PUT",
        true,
        0,
        [502],
        "502 from 9001",
        [],
      ],
      [
        "proxy_next_upstream_tries 1",
        "GET",
        false,
        1,
        [502],
        "502 from 9001",
        [],
      ],
    ];
  for (
    const [name, method, streamedBody, tries, statuses, expected, drops]
      of cases
  ) {
    await t.step(name, async () => {
      const group = twoServers();
      const dropped: string[] = [];
      let call = 0;
      const outcome = await tryPeers<Answer, string>(group, {
        method,
        upstreamPath: "/x",
        streamedBody,
        onFailure: () => {},
        next: { mask: http502, tries, timeoutMs: 0 },
        answers: {
          statusOf: (answer) => answer.status,
          drop: (answer, d) =>
            dropped.push(
              `${d.status} ${answer.port}${d.disabled ? " disabled" : ""}`,
            ),
        },
      }, (peer) =>
        Promise.resolve({
          status: statuses[call++]!,
          port: peer.spec.address.port,
        }), (answer) => `${answer.status} from ${answer.port}`);
      strictEqual(
        outcome.kind === "ok" ? outcome.value : outcome.kind,
        expected,
      );
      deepStrictEqual(dropped, drops);
      strictEqual(call, statuses.length, "attempts made");
      for (const p of group.peers) p.client.close();
    });
  }
});

Deno.test("tryPeers() returns a bug as a defect instead of trying the next server", async () => {
  const group = twoServers();
  let calls = 0;
  const outcome = await tryPeers(group, {
    method: "GET",
    upstreamPath: "/",
    streamedBody: false,
    onFailure: () => {},
  }, () => {
    calls++;
    return Promise.reject(new TypeError("a bug"));
  }, (value) => value);
  strictEqual(outcome.kind, "defect");
  strictEqual(
    outcome.kind === "defect" && outcome.error instanceof TypeError,
    true,
  );
  strictEqual(calls, 1);
  for (const p of group.peers) p.client.close();
});

Deno.test("upstreamField() names the server tried and the path sent", () => {
  const group = twoServers();
  const cases: [number, string, string][] = [
    [0, "/loginms", "http://127.0.0.1:9001/loginms"],
    [
      1,
      "/Home31/UpDateTitle?id=7",
      "http://127.0.0.1:9002/Home31/UpDateTitle?id=7",
    ],
  ];
  for (const [peer, path, expected] of cases) {
    strictEqual(upstreamField(group.peers[peer]!, path), expected);
  }
  for (const p of group.peers) p.client.close();
});
