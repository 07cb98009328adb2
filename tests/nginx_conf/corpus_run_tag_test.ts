/**
 * The corpus harness counts what a side's upstreams received for a probe by
 * the side's tag, not by arrival alone: a request another run's server sent
 * to the same port, or the gateway's `--check` probe arriving late, is not
 * one of the side's probes. The server here is a relay on 127.0.0.1 that
 * sends such a request to the recording upstream before it passes each
 * probe on, so every probe's slot meets one, every run.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { Probe } from "./_corpus/client.ts";
import { probeSide, type Side } from "./_corpus/run_side.ts";
import { newRunTag, ownRequests, RUN_FIELD } from "./_corpus/run_tag.ts";
import { buildStation } from "./_corpus/station.ts";
import { type Received, startRecordingUpstream } from "./_corpus/upstream.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Writes a request on a new connection and reads the answer to its end. */
async function exchange(
  port: number,
  request: Uint8Array,
): Promise<Uint8Array> {
  using conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(request);
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(16 * 1024);
  for (let i = 0; i < 1000; i++) {
    const n = await conn.read(buf);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
  }
  return new Uint8Array(chunks.flatMap((c) => [...c]));
}

/**
 * A relay: for each client request (a probe: a head with `Connection:
 * close`, no body), the interloper's request to the upstream first, then
 * the probe's, whose answer goes back; an access line for each.
 */
function relay(upstream: number, interloper: string, log: string) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    for await (const conn of listener) {
      try {
        let head = "";
        const buf = new Uint8Array(16 * 1024);
        for (let i = 0; i < 100 && !head.includes("\r\n\r\n"); i++) {
          const n = await conn.read(buf);
          if (n === null) break;
          head += dec.decode(buf.subarray(0, n));
        }
        await exchange(upstream, enc.encode(interloper));
        await conn.write(await exchange(upstream, enc.encode(head)));
        await Deno.writeTextFile(log, `${head.split("\r\n")[0]}\n`, {
          append: true,
        });
      } finally {
        conn.close();
      }
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      listener.close();
      await served.catch(() => {});
    },
  };
}

const PROBES: Probe[] = [
  { label: "first", method: "GET", target: "/one" },
  { label: "second", method: "GET", target: "/two" },
  { label: "third", method: "POST", target: "/three", body: "x=1" },
];

const INTERLOPERS: [string, string][] = [
  [
    "a server of another run, passing on that run's probe",
    `GET /theirs HTTP/1.0\r\nHost: t\r\n${RUN_FIELD}: ${newRunTag()}\r\n\r\n`,
  ],
  [
    "the gateway's --check probe, arriving after its check ended",
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
    "User-Agent: station-gateway-probe\r\nConnection: close\r\n\r\n",
  ],
];

for (const [what, interloper] of INTERLOPERS) {
  Deno.test(`probeSide() leaves out ${what}`, async () => {
    const caseDir = await Deno.makeTempDir({ prefix: "corpus-run-tag-" });
    try {
      await Deno.writeTextFile(
        join(caseDir, "nginx.conf"),
        "events {}\nhttp {\n    server { listen {{LISTEN}}; }\n}\n",
      );
      const seen: Received[] = [];
      await using upstream = startRecordingUpstream(1, seen);
      await using station = buildStation(caseDir, {
        listen: [0],
        upstream: [upstream.port],
      });
      await using server = relay(
        upstream.port,
        interloper,
        join(station.prefix, "logs/access.log"),
      );
      const side: Side = {
        station,
        seen,
        tag: newRunTag(),
        names: {
          prefix: station.prefix,
          listen: [server.port],
          upstream: [upstream.port],
        },
      };
      const running = { ready: true, output: () => "" };
      const { outcomes } = await probeSide(
        side,
        { ...running, [Symbol.asyncDispose]: async () => {} },
        PROBES,
        { requestTimeoutMs: 3000, strict: false },
        Date.now() + 60_000,
      );
      deepStrictEqual(
        outcomes.map((
          o,
        ) => [o.status, o.upstream.map((u) => u.split("\n")[0])]),
        PROBES.map((p) => [
          "200",
          [`upstream 1: ${p.method} ${p.target} HTTP/1.x`],
        ]),
      );
    } finally {
      await Deno.remove(caseDir, { recursive: true });
    }
  });
}

const R = (fields: [string, string][]): Received => ({
  upstream: 1,
  requestLine: "GET / HTTP/1.0",
  fields,
  framing: "none",
  body: "",
});

Deno.test("ownRequests() keeps the side's requests, its tag taken out", () => {
  const rows: [string, [string, string][], [string, string][] | null][] = [
    ["own tag", [["Host", "h"], ["X-Corpus-Run", "ours"]], [["Host", "h"]]],
    ["own tag, lower case", [["x-corpus-run", "ours"]], []],
    ["own tag, FastCGI", [["HTTP_X_CORPUS_RUN", "ours"]], []],
    ["another run's tag", [["X-Corpus-Run", "theirs"]], null],
    ["another run's tag, FastCGI", [["HTTP_X_CORPUS_RUN", "theirs"]], null],
    ["both tags", [["X-Corpus-Run", "ours"], ["X-Corpus-Run", "x"]], null],
    ["no tag", [["Host", "h"]], [["Host", "h"]]],
    ["check probe", [["User-Agent", "station-gateway-probe"]], null],
    [
      "check probe, FastCGI",
      [["HTTP_USER_AGENT", "station-gateway-probe"]],
      null,
    ],
    [
      "a probe's own agent",
      [["User-Agent", "corpus-probe"], ["X-Corpus-Run", "ours"]],
      [["User-Agent", "corpus-probe"]],
    ],
  ];
  for (const [what, fields, kept] of rows) {
    deepStrictEqual(
      ownRequests([R(fields)], "ours").map((r) => r.fields),
      kept === null ? [] : [kept],
      what,
    );
  }
});
