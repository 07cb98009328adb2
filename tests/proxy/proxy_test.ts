/** Behaviour of /api/ forwarding against a real upstream on loopback. */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { gzipSync } from "node:zlib";
import {
  rawRequest,
  refusedPort,
  startGateway,
  startUpstream,
} from "../_utils.ts";

Deno.test("gateway forwards both spec endpoints with their POST bodies", async () => {
  await using upstream = startUpstream((r) =>
    new Response(`seen ${r.target} ${new TextDecoder().decode(r.body)}`)
  );
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  const cases: [string, string][] = [
    ["/api/loginms", '{"user":"demo","password":"x"}'],
    ["/api/Home31/UpDateTitle", "title=Station%201"],
  ];
  for (const [path, body] of cases) {
    const res = await fetch(gw.url + path, { method: "POST", body });
    strictEqual(res.status, 200);
    strictEqual(await res.text(), `seen ${path.slice(4)} ${body}`);
  }
  deepStrictEqual(upstream.seen.map((r) => `${r.method} ${r.target}`), [
    "POST /loginms",
    "POST /Home31/UpDateTitle",
  ]);
  strictEqual(upstream.seen[0]!.headers.get("content-length"), "30");
  strictEqual(
    upstream.seen[0]!.headers.get("host"),
    `127.0.0.1:${upstream.port}`,
  );
});

Deno.test("gateway passes case, encoding and query byte for byte", async () => {
  await using upstream = startUpstream();
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  const targets = [
    "/api/Home31/UpDateTitle?Id=7&Name=A%20b&x=%2F",
    "/api/a%2Fb/C%2fd%5C",
    "/api/%E4%B8%AD/%7e",
    "/api/x/../loginms?q",
    "/api/",
  ];
  for (const target of targets) {
    const res = await rawRequest(
      gw.port,
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    match(res, /^HTTP\/1\.1 200/);
  }
  deepStrictEqual(upstream.seen.map((r) => r.target), [
    "/Home31/UpDateTitle?Id=7&Name=A%20b&x=%2F",
    // Encoded separators make segments: routed on, and sent, as nginx
    // normalises them (`/api/a%2fb` goes upstream as `/a/b`).
    "/a/b/C/d/",
    "/%E4%B8%AD/%7e",
    "/loginms?q",
    "/",
  ]);
});

Deno.test("gateway passes non-ASCII header bytes both ways unchanged", async () => {
  // Deno holds header values as ByteStrings (one char per byte): a UTF-8
  // "é" (C3 A9) arrives as "\u00c3\u00a9". nginx forwards the bytes as they
  // are; encoding those chars as UTF-8 again would send C3 83 C2 A9.
  await using upstream = startUpstream(() =>
    // UTF-8 "—é" and FF: 0x80-0x9F are where windows-1252 differs.
    new Response("ok", {
      headers: { "x-back": "\u00e2\u0080\u0094\u00c3\u00a9\u00ff" },
    })
  );
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  const head = [
    ...new TextEncoder().encode(
      "GET /api/caf\u00e9 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Name: ",
    ),
    0xc3,
    0xa9,
    0xff,
    ...new TextEncoder().encode("\r\n\r\n"),
  ];
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
  await conn.write(new Uint8Array(head));
  const received: number[] = [];
  const buf = new Uint8Array(4096);
  for (let i = 0; i < 100; i++) {
    const n = await conn.read(buf);
    if (n === null) break;
    received.push(...buf.subarray(0, n));
  }
  conn.close();
  strictEqual(upstream.seen[0]!.target, "/caf\u00e9");
  strictEqual(upstream.seen[0]!.headers.get("x-name"), "\u00c3\u00a9\u00ff");
  const text = String.fromCharCode(...received);
  match(text, /^HTTP\/1\.1 200/);
  match(text, /\r\nx-back: \u00e2\u0080\u0094\u00c3\u00a9\u00ff\r\n/);
});

Deno.test("error lines hold a non-ASCII Referer as the bytes received", async () => {
  // nginx writes the raw bytes; the log file is UTF-8, so a UTF-8 Referer
  // must reach it as "é", not as the two chars Deno holds for its bytes.
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
  });
  const res = await rawRequest(
    gw.port,
    "GET /api/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" +
      "Referer: http://localhost/caf\u00e9\r\n\r\n",
  );
  match(res, /^HTTP\/1\.1 502/);
  strictEqual(gw.errorLines.length, 1);
  match(gw.errorLines[0]!, /, referrer: "http:\/\/localhost\/caf\u00e9"$/);
});

Deno.test("gateway sends each request's own bytes on a reused connection", async () => {
  // Heads and small bodies are built in one buffer per upstream connection;
  // a later, shorter request must not carry a longer one's leftovers.
  await using upstream = startUpstream((r) =>
    new Response(String(r.body.length))
  );
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  const sizes = [3000, 10, 16_200, 16_384, 20_000, 1, 0, 700];
  for (const [i, size] of sizes.entries()) {
    const body = new Uint8Array(size).fill(0x61 + i);
    const res = await fetch(`${gw.url}/api/b${i}`, { method: "POST", body });
    strictEqual(await res.text(), String(size));
  }
  strictEqual(upstream.seen.length, sizes.length);
  for (const [i, size] of sizes.entries()) {
    const seen = upstream.seen[i]!;
    strictEqual(seen.target, `/b${i}`);
    deepStrictEqual(seen.body, new Uint8Array(size).fill(0x61 + i), `${i}`);
  }
});

Deno.test("gateway answers /api with 301 to /api/ as nginx does", async () => {
  await using upstream = startUpstream();
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  // fetch cannot set Host (Deno ignores it), so this one speaks raw HTTP.
  const res = await rawRequest(
    gw.port,
    "GET /api?x=1 HTTP/1.1\r\nHost: localhost:8081\r\nConnection: close\r\n\r\n",
  );
  match(res, /^HTTP\/1\.1 301 /);
  match(
    res,
    new RegExp(`\r\nlocation: http://localhost:${gw.port}/api/\\?x=1\r\n`, "i"),
  );
  strictEqual(upstream.seen.length, 0);
});

Deno.test("gateway never lets the request target choose the upstream host", async () => {
  await using upstream = startUpstream((r) => new Response(`at ${r.target}`));
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  const attempts = [
    "GET //evil.example/x HTTP/1.1\r\nHost: localhost\r\n",
    "GET /api//evil.example/x HTTP/1.1\r\nHost: localhost\r\n",
    "GET http://evil.example/api/x HTTP/1.1\r\nHost: localhost\r\n",
    "GET http://u:p@evil.example/api/y HTTP/1.1\r\nHost: localhost\r\n",
    "GET /api/@evil.example/z HTTP/1.1\r\nHost: localhost\r\n",
    "GET /api\\\\evil.example\\w HTTP/1.1\r\nHost: localhost\r\n",
    "GET /api/x HTTP/1.1\r\nHost: evil.example/zz\r\n",
    "GET /api/x HTTP/1.1\r\nHost: a@evil.example\r\n",
  ];
  const statuses = [];
  for (const head of attempts) {
    const res = await rawRequest(gw.port, `${head}Connection: close\r\n\r\n`);
    statuses.push(res.slice(9, 12));
  }
  // Every forwarded request reached our one upstream, on its own host.
  for (const r of upstream.seen) {
    strictEqual(r.headers.get("host"), `127.0.0.1:${upstream.port}`);
  }
  deepStrictEqual(upstream.seen.map((r) => r.target), [
    "/evil.example/x",
    "/x",
    "/@evil.example/z",
    "/evil.example/w",
    "/x",
  ]);
  // "//evil.example/x" is a static path; a target's authority with "@"
  // and a Host with "/" get 400, a Host with "@" is served as nginx serves
  // it (ngx_http_parse_request_line, ngx_http_validate_host), and still
  // reaches only the configured upstream.
  deepStrictEqual(statuses, [
    "404",
    "200",
    "200",
    "400",
    "200",
    "200",
    "400",
    "200",
  ]);
});

Deno.test("gateway removes hop-by-hop headers both ways and sends nginx's Host", async () => {
  await using upstream = startUpstream(() =>
    new Response("ok", {
      headers: {
        connection: "x-internal",
        "x-internal": "secret",
        "keep-alive": "timeout=5",
        server: "tiny-upstream/1.0",
        "x-upstream": "app",
      },
    })
  );
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  const res = await rawRequest(
    gw.port,
    "GET /api/h HTTP/1.1\r\nHost: localhost:8081\r\nConnection: close, X-Foo\r\n" +
      "X-Foo: bar\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: h2c\r\n" +
      "X_Under_Score: dropped\r\nCookie: a=1\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n",
  );
  const seen = upstream.seen[0]!.headers;
  strictEqual(seen.get("host"), `127.0.0.1:${upstream.port}`);
  for (const name of ["keep-alive", "te", "upgrade", "x_under_score"]) {
    strictEqual(seen.has(name), false, name);
  }
  // A field the client's Connection names passes, as nginx passes it
  // (only its own hop-by-hop list is dropped).
  strictEqual(seen.get("x-foo"), "bar");
  strictEqual(seen.get("cookie"), "a=1");
  strictEqual(seen.get("x-forwarded-for"), "203.0.113.9");
  match(res, /x-upstream: app/i);
  // A field the upstream's Connection names passes too: nginx reads that
  // field only for `close` (ngx_http_upstream_process_connection).
  match(res, /x-internal: secret/i);
  strictEqual(/keep-alive: timeout|tiny-upstream/i.test(res), false);
});

Deno.test("gateway adds X-Forwarded-* only when asked", async () => {
  await using upstream = startUpstream();
  await using gw = await startGateway({
    upstreamUrl: upstream.origin,
    addForwardedHeaders: true,
  });
  await rawRequest(
    gw.port,
    "GET /api/x HTTP/1.1\r\nHost: station:8081\r\nConnection: close\r\n\r\n",
  );
  const seen = upstream.seen[0]!.headers;
  strictEqual(seen.get("x-forwarded-for"), "127.0.0.1");
  strictEqual(seen.get("x-forwarded-proto"), "http");
  strictEqual(seen.get("x-forwarded-host"), "station:8081");
});

Deno.test("gateway hands 3xx and Set-Cookie to the browser and rewrites Location", async () => {
  await using upstream = startUpstream(() => new Response(null));
  const origin = upstream.origin;
  await using redirecting = startUpstream((r) => {
    const headers = new Headers([
      [
        "location",
        r.target === "/abs"
          ? `${origin.replace(/:\d+$/, ":" + redirectingPort())}/home?a=1`
          : "/rel",
      ],
      ["set-cookie", "sid=abc; Path=/"],
      ["set-cookie", "theme=dark"],
    ]);
    return new Response("moved!", { status: 302, headers });
  });
  function redirectingPort() {
    return redirecting.port;
  }
  await using gw = await startGateway({ upstreamUrl: redirecting.origin });
  const abs = await rawRequest(
    gw.port,
    "POST /api/abs HTTP/1.1\r\nHost: localhost:8081\r\nContent-Length: 9\r\n" +
      "Connection: close\r\n\r\nuser=demo",
  );
  match(abs, /^HTTP\/1\.1 302 /);
  match(abs, /\r\n\r\nmoved!$/);
  match(
    abs,
    new RegExp(
      `\r\nlocation: http://localhost:${gw.port}/api/home\\?a=1\r\n`,
      "i",
    ),
  );
  deepStrictEqual(abs.match(/^set-cookie: .*$/gim), [
    "set-cookie: sid=abc; Path=/",
    "set-cookie: theme=dark",
  ]);
  const rel = await fetch(`${gw.url}/api/rel`, { redirect: "manual" });
  await rel.body?.cancel();
  strictEqual(rel.headers.get("location"), "/rel");
  strictEqual(
    redirecting.seen.length,
    2,
    "the gateway must not follow redirects",
  );
});

Deno.test("gateway passes a gzip-ing upstream's bytes through unchanged", async () => {
  const text = "hello gzip ".repeat(100);
  const packed = new Uint8Array(gzipSync(new TextEncoder().encode(text)));
  await using upstream = startUpstream((r) => {
    const wants = r.headers.get("accept-encoding") ?? "";
    return wants.includes("gzip")
      ? new Response(packed, {
        headers: {
          "content-encoding": "gzip",
          "content-type": "text/plain",
          vary: "Accept-Encoding",
        },
      })
      : new Response(text, { headers: { "content-type": "text/plain" } });
  });
  await using gw = await startGateway({ upstreamUrl: upstream.origin });

  // Raw bytes: the gzip body and its headers arrive exactly as sent.
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
  await conn.write(new TextEncoder().encode(
    "GET /api/z HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
  ));
  const got: Uint8Array[] = [];
  for await (const chunk of conn.readable) got.push(chunk);
  const all = new Uint8Array(got.reduce((n, c) => n + c.length, 0));
  got.reduce((at, c) => (all.set(c, at), at + c.length), 0);
  const split = all.findIndex((_, i) =>
    all[i] === 13 && all[i + 1] === 10 && all[i + 2] === 13 && all[i + 3] === 10
  );
  const head = new TextDecoder().decode(all.subarray(0, split));
  match(head, /content-encoding: gzip/i);
  match(head, new RegExp(`content-length: ${packed.length}`, "i"));
  deepStrictEqual(all.subarray(split + 4), packed);

  // A browser's fetch decodes it itself.
  const res = await fetch(`${gw.url}/api/z`, {
    headers: { "accept-encoding": "gzip" },
  });
  strictEqual(await res.text(), text);

  // The upstream saw exactly the client's Accept-Encoding, and none when none was sent.
  await rawRequest(
    gw.port,
    "GET /api/z HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
  );
  strictEqual(upstream.seen[0]!.headers.get("accept-encoding"), "gzip");
  strictEqual(upstream.seen[2]!.headers.get("accept-encoding"), null);
});

Deno.test("gateway keeps every method, status and reason", async () => {
  await using upstream = startUpstream((r) =>
    new Response(r.method === "HEAD" ? null : `m=${r.method}`, {
      status: r.method === "DELETE" ? 404 : 200,
      headers: { "x-method": r.method },
    })
  );
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  for (
    const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]
  ) {
    const res = await fetch(`${gw.url}/api/m`, {
      method,
      ...(method === "GET" || method === "HEAD" ? {} : { body: "b" }),
    });
    await res.body?.cancel();
    strictEqual(res.headers.get("x-method"), method);
    strictEqual(res.status, method === "DELETE" ? 404 : 200);
  }
});

Deno.test("gateway writes one access line per request in combined format", async () => {
  await using upstream = startUpstream(() =>
    new Response("twenty bytes of body")
  );
  await using gw = await startGateway({ upstreamUrl: upstream.origin });
  const res = await fetch(`${gw.url}/api/loginms`, {
    method: "POST",
    body: "x",
    headers: {
      referer: "http://localhost:8081/",
      "user-agent": "test-agent",
      authorization: "Basic dTpw",
    },
  });
  await res.text();
  const { waitFor } = await import("../_utils.ts");
  await waitFor(() => gw.accessLines.length === 1);
  match(
    gw.accessLines[0]!,
    /^127\.0\.0\.1 - u \[\d\d\/\w{3}\/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "POST \/api\/loginms HTTP\/1\.1" 200 20 "http:\/\/localhost:8081\/" "test-agent"$/,
  );
});
