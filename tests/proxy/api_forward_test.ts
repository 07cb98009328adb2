/** The `/api/` branch: origins, the 413, and forwarding over loopback. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  type ApiForwarder,
  createForwarder,
  forwardApi,
  publicOrigin,
  type RequestEvent,
  tooLarge,
} from "../../src/proxy/api_forward.ts";
import { parseUpstreamServer } from "../../src/config/addresses.ts";
import { GatewayStats } from "../../src/status.ts";
import { createUpstreamGroup } from "../../src/upstream/group.ts";
import { refusedPort, startUpstream, testConfig } from "../_utils.ts";

Deno.test("publicOrigin() takes the Host name and the listening port", async (t) => {
  const cases: [string | null, number, string][] = [
    ["localhost:8081", 8081, "http://localhost:8081"],
    ["localhost", 8081, "http://localhost:8081"],
    ["station7:9999", 8081, "http://station7:8081"],
    ["[::1]:8081", 8081, "http://[::1]:8081"],
    ["[fe80::1]", 80, "http://[fe80::1]"],
    ["example", 80, "http://example"],
    ["", 8081, "http://127.0.0.1:8081"],
    [null, 8081, "http://127.0.0.1:8081"],
  ];
  for (const [host, port, expected] of cases) {
    await t.step(`${host} ${port}`, () => {
      strictEqual(publicOrigin(host, port), expected);
    });
  }
});

Deno.test("tooLarge() logs nginx's line and closes only after a partial read", async () => {
  for (const bodyRead of [false, true]) {
    const events: RequestEvent[] = [];
    const res = tooLarge(
      "client intended to send too large body: 9 bytes",
      (e) => events.push(e),
      bodyRead,
    );
    strictEqual(res.status, 413);
    strictEqual(res.headers.get("connection"), bodyRead ? "close" : null);
    await res.body?.cancel();
    deepStrictEqual(events, [{
      level: "error",
      message: "client intended to send too large body: 9 bytes",
    }]);
  }
});

function forwarder(
  origin: string,
): ApiForwarder & { stats: GatewayStats } & AsyncDisposable {
  const group = createUpstreamGroup("backend", [parseUpstreamServer(origin)], {
    timeouts: { connectMs: 2000, sendMs: 2000, readMs: 2000 },
    upstreamKeepalive: 4,
  });
  const stats = new GatewayStats();
  return {
    ...createForwarder(testConfig({ clientMaxBodySize: 1024 }), {
      port: 8081,
      group,
      stats,
    }),
    stats,
    [Symbol.asyncDispose]() {
      group.close();
      return Promise.resolve();
    },
  };
}

/** POSTs `target` through forwardApi() as a client on 127.0.0.1 would. */
async function forward(
  fw: ApiForwarder,
  target: string,
  init: RequestInit,
): Promise<{ res: Response; events: RequestEvent[] }> {
  const events: RequestEvent[] = [];
  const res = await forwardApi(
    new Request(`http://localhost:8081/api${target}`, {
      method: "POST",
      ...init,
    }),
    {
      upstreamPath: target,
      host: "localhost:8081",
      client: "127.0.0.1",
      log: (e) => events.push(e),
      contentLength: null,
    },
    fw,
  );
  return { res, events };
}

Deno.test("forwardApi() relays the upstream's answer and rewrites its Location", async () => {
  await using upstream = startUpstream((r) =>
    new Response(`seen ${r.method} ${r.target}`, {
      status: 302,
      headers: { location: `http://127.0.0.1:${upstream.port}/Home31/Index` },
    })
  );
  await using fw = forwarder(upstream.origin);
  const { res, events } = await forward(fw, "/loginms?a=1", { body: "{}" });
  strictEqual(res.status, 302);
  strictEqual(
    res.headers.get("location"),
    "http://localhost:8081/api/Home31/Index",
  );
  strictEqual(await res.text(), "seen POST /loginms?a=1");
  deepStrictEqual(events, []);
});

Deno.test("forwardApi() answers 502 and logs the refusal with the server tried", async () => {
  const port = refusedPort();
  await using fw = forwarder(`http://127.0.0.1:${port}`);
  const { res, events } = await forward(fw, "/loginms", { body: "{}" });
  strictEqual(res.status, 502);
  await res.body?.cancel();
  strictEqual(events[0]?.level, "error");
  strictEqual(events[0]?.message, "connect() failed");
  strictEqual(events[0]?.action, "connecting to upstream");
  strictEqual(events[0]?.upstream, `http://127.0.0.1:${port}/loginms`);
  strictEqual(fw.stats.upstreamFailures.refused, 1);
});

Deno.test("forwardApi() answers 413 for a chunked body over the limit, nothing forwarded", async () => {
  await using upstream = startUpstream();
  await using fw = forwarder(upstream.origin);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new Uint8Array(1000));
      c.enqueue(new Uint8Array(1000));
      c.close();
    },
  });
  const { res, events } = await forward(fw, "/upload", {
    body,
    // As Deno.serve's requests carry it: planBody() reads the framing from
    // the fields, not from `req.body`.
    headers: { "transfer-encoding": "chunked" },
  });
  strictEqual(res.status, 413);
  strictEqual(res.headers.get("connection"), "close");
  await res.body?.cancel();
  deepStrictEqual(events, [{
    level: "error",
    message: "client intended to send too large chunked body: 1000+1000 bytes",
  }]);
  strictEqual(upstream.seen.length, 0);
});
