/**
 * One call object carries every try of a request (`PeerExchange`, a
 * WebSocket handshake's `PeerHold`), and a transport tells `onEnd` when
 * its exchange is over. A transport whose end of an earlier try comes
 * late (a connection that closes after the walk moved on, as a FastCGI
 * connection's `onClose` could) must free nothing of the try under way:
 * `least_conn`'s count of the current server stays until its own end, and
 * each server is freed exactly once. Scripted transports (the seam of
 * `transport.ts`): the ends are told when the test says.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseUpstreamServer } from "../../src/config/addresses.ts";
import {
  PeerHold,
  tryPeers,
  type UpstreamCall,
  UpstreamError,
  type UpstreamReply,
  type UpstreamTransport,
} from "../../src/upstream/mod.ts";
import { readNextUpstream } from "../../src/upstream/try_next.ts";
import { UpstreamGroup } from "../../src/upstream/group.ts";
import { proxyRequest } from "../../src/proxy/mod.ts";

/** What a scripted server does with a send. */
type Behaviour = "refuse" | "answer 500" | "answer 200";

/**
 * A server whose ends are told only when the test calls them: each send's
 * `onEnd`, with the `tryIndex` it read, is kept in `ends`.
 */
class Scripted implements UpstreamTransport {
  readonly idleCount = 0;
  readonly ends: (() => void)[] = [];
  sends = 0;
  constructor(readonly behaviour: Behaviour) {}
  close(): void {}
  send(call: UpstreamCall): Promise<UpstreamReply> {
    this.sends++;
    const tryIndex = call.tryIndex;
    this.ends.push(() => call.onEnd?.(tryIndex));
    if (this.behaviour === "refuse") {
      return Promise.reject(
        new UpstreamError("connect() failed (111: Connection refused)", {
          kind: "refused",
          action: "connecting to upstream",
        }),
      );
    }
    const status = this.behaviour === "answer 500" ? 500 : 200;
    return Promise.resolve({
      head: {
        version: "HTTP/1.1",
        status,
        reason: "",
        fields: [],
        headLength: 0,
      },
      // A body whose end the test tells (its cancel tells nothing now).
      body: new ReadableStream<Uint8Array>({}, { highWaterMark: 0 }),
      length: null,
    });
  }
}

function group(servers: Scripted[]): UpstreamGroup {
  return new UpstreamGroup(
    "lc",
    servers.map((client, i) => ({
      spec: {
        ...parseUpstreamServer(`http://127.0.0.1:${9001 + i}`),
        maxFails: 0,
      },
      client,
    })),
    Date.now,
    "least-conn",
  );
}

const counts = (g: UpstreamGroup) => g.peers.map((p) => p.rr.conns);

function proxied(g: UpstreamGroup, next: string[]) {
  return proxyRequest(new Request("http://localhost/x"), {
    group: g,
    upstreamPath: "/x",
    clientMaxBodySize: 0,
    contentLength: null,
    onFailure: () => {},
    onWarning: () => {},
    headers: [],
    next: {
      ...readNextUpstream(next, { module: "proxy" }),
      tries: 0,
      timeoutMs: 0,
    },
    call: {
      version: "1.1",
      leading: [],
      timeouts: { connectMs: 1000, sendMs: 1000, readMs: 1000 },
      headBufferSize: 4096,
      keepalive: true,
    },
    toResponse: (reply) =>
      new Response(reply.body, { status: reply.head.status }),
  });
}

/**
 * [name, the first server's behaviour, next_upstream words]: the first
 * try's end comes after the second try's answer.
 */
const CASES: [string, Behaviour, string[]][] = [
  ["a refused first try", "refuse", ["error", "timeout"]],
  ["a first answer dropped (http_500)", "answer 500", [
    "error",
    "timeout",
    "http_500",
  ]],
];

Deno.test("proxyRequest(): a late end of an earlier try frees nothing of the try under way", async (t) => {
  for (const [name, first, next] of CASES) {
    await t.step(name, async () => {
      const servers = [
        new Scripted(first),
        new Scripted("answer 200"),
        new Scripted("answer 200"),
      ];
      const g = group(servers);
      const result = await proxied(g, next);
      strictEqual(result.kind, "response");
      // The first server was tried and freed; the second holds the answer.
      deepStrictEqual(counts(g), [0, 1, 0]);
      // The first try's end, come late, and told twice.
      servers[0]!.ends[0]!();
      servers[0]!.ends[0]!();
      deepStrictEqual(counts(g), [0, 1, 0]);
      // least_conn's next choice is the third server: the second is busy.
      const again = await proxied(g, next);
      strictEqual(again.kind, "response");
      strictEqual(servers[2]!.sends, 1);
      deepStrictEqual(counts(g), [0, 1, 1]);
      // Each answer's own end frees its server, once.
      servers[1]!.ends[0]!();
      servers[1]!.ends[0]!();
      servers[2]!.ends[0]!();
      deepStrictEqual(counts(g), [0, 0, 0]);
      if (result.kind === "response") await result.response.body?.cancel();
      if (again.kind === "response") await again.response.body?.cancel();
    });
  }
});

Deno.test("tryPeers() with a PeerHold (a WebSocket handshake): a late end of an earlier try frees nothing of the try under way", async () => {
  const servers = [new Scripted("refuse"), new Scripted("answer 200")];
  const g = group(servers);
  const hold = new PeerHold(g);
  const outcome = await tryPeers<UpstreamReply, UpstreamReply>(g, {
    method: "GET",
    upstreamPath: "/ws",
    streamedBody: false,
    onFailure: () => {},
    hold,
  }, (peer) =>
    peer.client.send({
      method: "GET",
      path: "/ws",
      host: "h",
      headers: [],
      body: null,
      signal: new AbortController().signal,
      onBodyError: () => {},
      onBodyWarning: () => {},
      tryIndex: hold.tryIndex,
      onEnd: hold.free,
    }), (reply) => reply);
  strictEqual(outcome.kind, "ok");
  deepStrictEqual(counts(g), [0, 1]);
  servers[0]!.ends[0]!();
  deepStrictEqual(counts(g), [0, 1]);
  // The tunnel's close (the caller's free, no try named) frees it once.
  hold.free();
  hold.free();
  deepStrictEqual(counts(g), [0, 0]);
  if (outcome.kind === "ok") {
    await (outcome.value.body as ReadableStream).cancel();
  }
});
