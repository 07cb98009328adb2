/**
 * The handler in process, over a fake transport: no socket, no upstream
 * server. The request goes in as a `Request`, the transport records the
 * call the proxy made and answers from a script, and the test reads the
 * response and the log lines. The socket suites beside this one prove the
 * same flow over the wire.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { parseUpstreamServer } from "../src/config/addresses.ts";
import { ConnectionCounter } from "../src/log/connection_counter.ts";
import { createGatewayHandler } from "../src/gateway.ts";
import { testConfig } from "./_utils.ts";
import { createLogger } from "../src/log/logger.ts";
import { upstreamErrorFromOs, upstreamTimeout } from "../src/upstream/error.ts";
import type { UpstreamTransport } from "../src/upstream/transport.ts";
import type {
  UpstreamCall,
  UpstreamReply,
  UpstreamServerSpec,
} from "../src/upstream/types.ts";

/** What one scripted server does with a call. */
type Script = (
  call: UpstreamCall,
) => UpstreamReply | Error | Promise<UpstreamReply>;

/** A call as the fake transport saw it, with its body read. */
interface SeenCall {
  server: string;
  method: string;
  path: string;
  host: string;
  body: string;
}

const refused = () =>
  upstreamErrorFromOs(
    new Error("Connection refused (os error 111)"),
    "connecting to upstream",
    "linux",
  );

function reply(status: number, body: string): UpstreamReply {
  const bytes = new TextEncoder().encode(body);
  return {
    head: {
      version: "HTTP/1.1",
      status,
      reason: "OK",
      fields: [["Content-Type", "text/plain"], [
        "Content-Length",
        String(bytes.length),
      ]],
      headLength: 0,
    },
    body: bytes,
    length: bytes.length,
  };
}

async function bodyText(body: UpstreamCall["body"]): Promise<string> {
  if (body === null) return "";
  if (body.kind === "bytes") return new TextDecoder().decode(body.bytes);
  if (body.kind === "file") {
    const bytes = new Uint8Array(body.length);
    for (let at = 0; at < bytes.length;) {
      const n = await body.file.readAt(bytes.subarray(at), at);
      if (n === null) break;
      at += n;
    }
    return new TextDecoder().decode(bytes);
  }
  return await new Response(body.stream).text();
}

/** A handler whose servers are the scripts, in order. */
function inProcess(scripts: Record<string, Script>, client = "127.0.0.1") {
  const errorLines: string[] = [];
  const calls: SeenCall[] = [];
  const transport = (spec: UpstreamServerSpec): UpstreamTransport => ({
    idleCount: 0,
    close() {},
    async send(call) {
      const server = spec.address.peer;
      calls.push({
        server,
        method: call.method,
        path: call.path,
        host: call.host,
        body: await bodyText(call.body),
      });
      const outcome = await scripts[`http://${server}`]!(call);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
  });
  const handler = createGatewayHandler(
    testConfig({
      clientMaxBodySize: 1024,
      errorLogLevel: "info",
      upstreams: Object.keys(scripts).map((url) => parseUpstreamServer(url)),
    }),
    {
      port: 8081,
      version: "test",
    },
    {
      logger: createLogger({
        errorLog: { write: (line: string) => errorLines.push(line) },
        accessLog: null,
        level: "info",
      }),
      counter: new ConnectionCounter(),
      transport,
    },
  );
  const info: Deno.ServeHandlerInfo<Deno.NetAddr> = {
    remoteAddr: { transport: "tcp", hostname: client, port: 50000 },
    completed: Promise.resolve(),
  };
  const send = (path: string, init: RequestInit = {}) =>
    handler(
      new Request(`http://localhost:8081${path}`, {
        ...init,
        // As Deno.serve hands over an HTTP/1.1 request: with its Host and
        // the Content-Length of its body.
        headers: {
          host: "localhost:8081",
          referer: "http://localhost:8081/",
          ...(typeof init.body === "string"
            ? { "content-length": String(init.body.length) }
            : {}),
          ...init.headers,
        },
      }),
      info,
    );
  return { send, calls, errorLines };
}

Deno.test("createGatewayHandler() forwards /api/ through the transport with the prefix removed", async () => {
  const cases: [string, string][] = [
    ["/api/loginms", "/loginms"],
    ["/api/Home31/UpDateTitle", "/Home31/UpDateTitle"],
    ["/api/a%20b/C?x=%20y&z", "/a%20b/C?x=%20y&z"],
    // An encoded slash makes new segments: normalised, as nginx sends it.
    ["/api/a%2Fb?x=%20y&z", "/a/b?x=%20y&z"],
    ["/api/", "/"],
  ];
  for (const [path, upstreamPath] of cases) {
    const gw = inProcess({ "http://127.0.0.1:8080": () => reply(200, "ok") });
    const res = await gw.send(path, { method: "POST", body: "{}" });
    strictEqual(res.status, 200, path);
    strictEqual(await res.text(), "ok");
    deepStrictEqual(gw.calls, [{
      server: "127.0.0.1:8080",
      method: "POST",
      path: upstreamPath,
      host: "127.0.0.1:8080",
      body: "{}",
    }], path);
    deepStrictEqual(gw.errorLines, [], path);
  }
});

Deno.test("createGatewayHandler() answers a transport failure with nginx's status and one line per attempt", async () => {
  const cases: {
    name: string;
    outcome: () => Error;
    status: number;
    line: RegExp;
  }[] = [
    {
      name: "refused",
      outcome: refused,
      status: 502,
      line:
        /\[error\] \d+#\d+: \*\d+ connect\(\) failed \(111: Connection refused\) while connecting to upstream, client: 127\.0\.0\.1, server: localhost, request: "POST \/api\/loginms HTTP\/1\.1", upstream: "http:\/\/127\.0\.0\.1:8080\/loginms", host: "localhost:8081", referrer: "http:\/\/localhost:8081\/"$/,
    },
    {
      name: "read timeout",
      outcome: () =>
        upstreamTimeout("reading response header from upstream", "linux"),
      status: 504,
      line:
        /\[error\] \d+#\d+: \*\d+ upstream timed out \(110: Connection timed out\) while reading response header from upstream, client: 127\.0\.0\.1, .*upstream: "http:\/\/127\.0\.0\.1:8080\/loginms"/,
    },
  ];
  for (const { name, outcome, status, line } of cases) {
    const gw = inProcess({ "http://127.0.0.1:8080": outcome });
    const res = await gw.send("/api/loginms", { method: "POST", body: "{}" });
    strictEqual(res.status, status, name);
    await res.body?.cancel();
    strictEqual(gw.errorLines.length, 1, name);
    match(gw.errorLines[0]!, line, name);
  }
});

Deno.test("createGatewayHandler() moves a refused request to the next server", async () => {
  const gw = inProcess({
    "http://127.0.0.1:19001": refused,
    "http://127.0.0.1:19002": () => reply(200, "second"),
  });
  const res = await gw.send("/api/loginms", { method: "POST", body: "{}" });
  strictEqual(res.status, 200);
  strictEqual(await res.text(), "second");
  deepStrictEqual(gw.calls.map((c) => c.server), [
    "127.0.0.1:19001",
    "127.0.0.1:19002",
  ]);
  const errors = gw.errorLines.filter((l) => l.includes("[error]"));
  strictEqual(errors.length, 1);
  match(errors[0]!, /upstream: "http:\/\/127\.0\.0\.1:19001\/loginms"/);
});

Deno.test("createGatewayHandler() never reaches the transport for static files or refused bodies", async () => {
  const gw = inProcess({ "http://127.0.0.1:8080": () => reply(200, "no") });
  const cases: [string, RequestInit, number][] = [
    ["/missing.js", {}, 404],
    ["/app/route", {}, 404],
    ["/api/loginms", { method: "POST", body: "x".repeat(2048) }, 413],
  ];
  for (const [path, init, status] of cases) {
    const res = await gw.send(path, init);
    strictEqual(res.status, status, path);
    await res.body?.cancel();
  }
  deepStrictEqual(gw.calls, []);
});

Deno.test("createGatewayHandler() shows the built-in page's log paths and last error to this machine only", async () => {
  // Port 9 refuses: the page's probe fails fast, and the failure below is
  // the last error line.
  const scripts = { "http://127.0.0.1:9": refused };
  for (const [client, shown] of [["127.0.0.1", true], ["10.0.0.7", false]]) {
    const gw = inProcess(scripts, client as string);
    const failed = await gw.send("/api/x", { method: "POST", body: "{}" });
    await failed.body?.cancel();
    const page = await (await gw.send("/")).text();
    strictEqual(page.includes("Error log:"), false, "no paths given here");
    strictEqual(page.includes("POST /api/x HTTP/1.1"), shown, String(client));
    strictEqual(page.includes("shown on the station itself"), !shown);
  }
});

Deno.test("createGatewayHandler() logs the attempts before a defect, then its [alert] line", async () => {
  const gw = inProcess({
    "http://127.0.0.1:19001": refused,
    "http://127.0.0.1:19002": () => new TypeError("boom: a bug"),
  });
  const res = await gw.send("/api/loginms", { method: "POST", body: "{}" });
  strictEqual(res.status, 500);
  await res.body?.cancel();
  deepStrictEqual(
    gw.errorLines.map((l) => l.match(/\[(\w+)\]/)![1]),
    ["error", "warn", "alert"],
  );
  match(gw.errorLines[0]!, /connect\(\) failed .*:19001\/loginms"/);
  match(gw.errorLines[1]!, /temporarily disabled .*:19001\/loginms"/);
  match(gw.errorLines[2]!, /unexpected error: TypeError: boom: a bug/);
});

Deno.test("createGatewayHandler() writes a failed attempt's line when it fails, before the next server answers", async () => {
  const second = Promise.withResolvers<UpstreamReply>();
  const gw = inProcess({
    "http://127.0.0.1:19001": refused,
    "http://127.0.0.1:19002": () => second.promise,
  });
  const pending = gw.send("/api/loginms", { method: "POST", body: "{}" });
  // The second server is still being tried: the first one's line is out,
  // with its own time, as nginx writes it; a stop now would not lose it.
  for (let i = 0; i < 100 && gw.calls.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
  strictEqual(gw.calls.length, 2);
  const lines = () => gw.errorLines.filter((l) => l.includes("[error]"));
  strictEqual(lines().length, 1);
  match(lines()[0]!, /upstream: "http:\/\/127\.0\.0\.1:19001\/loginms"/);
  second.resolve(reply(200, "late"));
  const res = await pending;
  strictEqual(await res.text(), "late");
  strictEqual(lines().length, 1);
});
