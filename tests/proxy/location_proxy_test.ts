import { ok, strictEqual } from "node:assert/strict";
import {
  readHead,
  refusedPort,
  startRawUpstream,
  startUpstream,
  writeText,
} from "../_utils.ts";
import type { UpstreamConf } from "../../src/engine/mod.ts";
import { proxyLocation, UpstreamRegistry } from "../../src/proxy/mod.ts";
import {
  implicitUpstream,
  locationConf,
  type LocationSpec,
  requestVars,
  serveLocations,
} from "./_location.ts";

const OK =
  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

/** An upstream that records each request head (and body) and answers `reply`. */
function recorder(reply: string | ((head: string) => string) = OK) {
  return startRawUpstream(async (conn, _i, up) => {
    while (true) {
      const head = await readHead(conn);
      if (head === null) return;
      up.heads.push(head);
      await writeText(conn, typeof reply === "string" ? reply : reply(head));
      if (!/keep-alive/i.test(typeof reply === "string" ? reply : "")) return;
    }
  });
}

/** One location on one implicit group. */
function single(spec: LocationSpec, upstreams?: UpstreamConf[]) {
  const conf = locationConf(spec);
  const group = conf.proxyPass!.group;
  return serveLocations([conf], upstreams ?? [implicitUpstream(group)]);
}

Deno.test("proxyLocation() sends nginx's default head: HTTP/1.0, Host $proxy_host, Connection close, the client's fields", async () => {
  await using up = recorder();
  await using gw = single({
    name: "/api/",
    pass: `http://127.0.0.1:${up.port}/`,
  });
  const res = await fetch(`http://127.0.0.1:${gw.port}/api/x%41?y=1`, {
    headers: { "x-foo": "bar", "keep-alive": "timeout=5", te: "trailers" },
  });
  strictEqual(await res.text(), "ok");
  const [line, host, connection, ...rest] = up.heads[0]!.split("\r\n");
  strictEqual(line, "GET /xA?y=1 HTTP/1.0");
  strictEqual(host, `Host: 127.0.0.1:${up.port}`);
  strictEqual(connection, "Connection: close");
  ok(rest.includes("x-foo: bar"));
  ok(
    !rest.some((f) => /^(keep-alive|te|connection):/i.test(f)),
    rest.join("|"),
  );
});

Deno.test("proxyLocation() frames a body after the set fields", async () => {
  await using up = recorder();
  await using gw = single({
    name: "/api/",
    pass: `http://127.0.0.1:${up.port}/`,
    set: [["X-Real-IP", "$remote_addr"]],
  });
  const res = await fetch(`http://127.0.0.1:${gw.port}/api/login`, {
    method: "POST",
    body: "hello",
  });
  await res.body?.cancel();
  const head = up.heads[0]!;
  ok(
    head.startsWith(
      `POST /login HTTP/1.0\r\nX-Real-IP: 127.0.0.1\r\nHost: 127.0.0.1:${up.port}\r\nConnection: close\r\nContent-Length: 5\r\n`,
    ),
    head,
  );
  ok(head.endsWith("\r\n\r\nhello") || head.endsWith("\r\n\r\n"), head);
});

Deno.test("proxyLocation() sends each location to its own group; failures name that group", async () => {
  await using a = recorder();
  await using b = recorder();
  const refused = refusedPort();
  const backend: UpstreamConf = {
    ...implicitUpstream(`127.0.0.1:${b.port}`),
    name: "backend",
    explicit: true,
  };
  const downs: UpstreamConf = {
    name: "downs",
    servers: [{
      ...implicitUpstream(`127.0.0.1:${b.port}`).servers[0]!,
      down: true,
    }],
    keepalive: 0,
    explicit: true,
  };
  await using gw = serveLocations([
    locationConf({ name: "/a/", pass: `http://127.0.0.1:${a.port}/` }),
    locationConf({ name: "/b/", pass: "http://backend/" }),
    locationConf({ name: "/c/", pass: `http://127.0.0.1:${refused}` }),
    locationConf({ name: "/d/", pass: "http://downs/v1/" }),
  ], [
    implicitUpstream(`127.0.0.1:${a.port}`),
    backend,
    implicitUpstream(`127.0.0.1:${refused}`),
    downs,
  ]);
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${gw.port}${path}`);
    await res.body?.cancel();
    return res.status;
  };
  strictEqual(await get("/a/one"), 200);
  strictEqual(await get("/b/two"), 200);
  strictEqual(await get("/c/three"), 502);
  strictEqual(await get("/d/four"), 502);
  ok(
    a.heads[0]!.startsWith(
      `GET /one HTTP/1.0\r\nHost: 127.0.0.1:${a.port}\r\n`,
    ),
  );
  ok(b.heads[0]!.startsWith("GET /two HTTP/1.0\r\nHost: backend\r\n"));
  strictEqual(b.heads.length, 1);
  strictEqual(
    gw.errors.join("\n"),
    [
      `error: connect() failed http://127.0.0.1:${refused}/c/three`,
      "error: no live upstreams http://downs/v1/four",
    ].join("\n"),
  );
});

Deno.test("proxyLocation() keeps upstream connections only with keepalive and no Connection: close", async () => {
  const KEEP =
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nKeep-Alive: x\r\n\r\nok";
  for (
    const [what, set, connections] of [
      ["the defaults close each", [] as [string, string][], 2],
      [
        'Connection "" keeps one',
        [["Connection", ""]] as [string, string][],
        1,
      ],
    ] as const
  ) {
    await using up = recorder(KEEP);
    const group = `127.0.0.1:${up.port}`;
    await using gw = single(
      {
        name: "/api/",
        pass: `http://${group}/`,
        version: "1.1",
        set: [...set],
      },
      [{ ...implicitUpstream(group), keepalive: 4 }],
    );
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`http://127.0.0.1:${gw.port}/api/k`);
      strictEqual(await res.text(), "ok");
    }
    strictEqual(up.connections, connections, what);
    ok(up.heads[0]!.startsWith("GET /k HTTP/1.1\r\n"), what);
  }
});

Deno.test("proxyLocation() relays a 6 KB upstream head only when proxy_buffer_size allows it", async () => {
  const big = `HTTP/1.1 200 OK\r\nX-Big: ${
    "b".repeat(6000)
  }\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`;
  for (const [size, status] of [[4096, 502], [16384, 200]] as const) {
    await using up = recorder(big);
    await using gw = single({
      name: "/api/",
      pass: `http://127.0.0.1:${up.port}/`,
      bufferSize: size,
    });
    const res = await fetch(`http://127.0.0.1:${gw.port}/api/big`);
    await res.body?.cancel();
    strictEqual(res.status, status, `proxy_buffer_size ${size}`);
  }
});

Deno.test("proxyLocation() times out after the location's proxy_read_timeout", async () => {
  await using up = startRawUpstream(async (conn) => {
    await readHead(conn);
    await conn.read(new Uint8Array(1)).catch(() => null);
  });
  await using gw = single({
    name: "/api/",
    pass: `http://127.0.0.1:${up.port}/`,
    timeouts: { connectMs: 60_000, sendMs: 60_000, readMs: 300 },
  });
  const res = await fetch(`http://127.0.0.1:${gw.port}/api/slow`);
  await res.body?.cancel();
  strictEqual(res.status, 504);
  strictEqual(
    gw.errors[0],
    `error: upstream timed out http://127.0.0.1:${up.port}/slow`,
  );
});

Deno.test("proxyLocation() hands an intercepted status to the flow and rewrites redirects", async () => {
  await using up = recorder((head) =>
    head.startsWith("GET /missing")
      ? "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine"
      : "HTTP/1.1 302 Found\r\nLocation: http://backend/login\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
  );
  const backend: UpstreamConf = {
    ...implicitUpstream(`127.0.0.1:${up.port}`),
    name: "backend",
    explicit: true,
  };
  await using gw = single(
    { name: "/api/", pass: "http://backend/", intercept: [404] },
    [backend],
  );
  const missing = await fetch(`http://127.0.0.1:${gw.port}/api/missing`);
  strictEqual(missing.status, 404);
  ok((await missing.text()).includes("<h1>404 Not Found</h1>"));
  const moved = await fetch(`http://127.0.0.1:${gw.port}/api/old`, {
    redirect: "manual",
  });
  await moved.body?.cancel();
  strictEqual(
    moved.headers.get("location"),
    `http://127.0.0.1:${gw.port}/api/login`,
  );
});

Deno.test("proxyLocation() keeps WWW-Authenticate on an intercepted 401, as nginx", async () => {
  await using up = recorder(
    'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="x"\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine',
  );
  await using gw = single({
    name: "/api/",
    pass: `http://127.0.0.1:${up.port}/`,
    intercept: [401],
  });
  const res = await fetch(`http://127.0.0.1:${gw.port}/api/private`);
  ok(!(await res.text()).includes("mine"));
  strictEqual(res.status, 401);
  strictEqual(res.headers.get("www-authenticate"), 'Basic realm="x"');
});

Deno.test("proxyLocation() forwards a body framed by neither field, and none for an empty one", async () => {
  // HTTP/2 frames a body without Content-Length or Transfer-Encoding; such a
  // request must not reach the upstream without it. Deno.serve's HTTP/1.1
  // cannot carry one, so the request is made here and handed to the proxy.
  await using up = startUpstream((r) =>
    new Response(
      `${r.method} ${r.headers.get("content-length")} ${
        r.headers.get("transfer-encoding")
      } ${new TextDecoder().decode(r.body)}`,
    )
  );
  const conf = locationConf({
    name: "/api/",
    pass: `http://127.0.0.1:${up.port}/`,
  });
  const group = conf.proxyPass!.group;
  const registry = new UpstreamRegistry(
    new Map([[group, implicitUpstream(group)]]),
  );
  const info = {
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 50000 },
    completed: Promise.resolve(),
  } as Deno.ServeHandlerInfo<Deno.NetAddr>;
  try {
    const send = async (method: string, body: string | null) => {
      const req = new Request("http://localhost:8081/api/x", {
        method,
        headers: { host: "localhost:8081" },
        body: body === null
          ? null
          : ReadableStream.from([new TextEncoder().encode(body)]),
      });
      const response = await proxyLocation(req, {
        conf,
        vars: requestVars(req, info, 8081)!,
        rewritten: false,
        log: () => {},
        contentLength: null,
      }, { registry, stats: { failed: () => {} } });
      return await response.text();
    };
    strictEqual(await send("POST", "hello"), "POST 5 null hello");
    strictEqual(await send("DELETE", ""), "DELETE null null ");
    strictEqual(await send("DELETE", null), "DELETE null null ");
  } finally {
    registry.close();
  }
});
