/** Several upstreams: nginx's failover semantics (ngx_http_upstream_next()). */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  refusedPort,
  startGateway,
  startRawUpstream,
  startUpstream,
  untilClosed,
} from "./_utils.ts";

const REFUSED = Deno.build.os === "windows"
  ? "10061: No connection could be made because the target machine actively refused it"
  : "111: Connection refused";

function post(path: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: localhost:8081\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
}

const masked = (lines: string[]) => lines.map(maskErrorLine);

Deno.test("failover: a refused primary moves the request to the backup, then is skipped for fail_timeout", async () => {
  const dead = refusedPort();
  await using backup = startUpstream((r) => new Response(`backup ${r.target}`));
  // The group's clock is the test's: fail_timeout must not pass while the
  // machine is slow, nor have to be waited for in real time.
  let clock = 1_000_000;
  await using gw = await startGateway({
    upstreamUrl: [
      `http://127.0.0.1:${dead} fail_timeout=300ms`,
      `${backup.origin} backup`,
    ],
    now: () => clock,
  });
  const first = await rawRequest(gw.port, post("/api/loginms"));
  match(first, /^HTTP\/1\.1 200 /);
  match(first, /backup \/loginms$/);
  deepStrictEqual(masked(gw.errorLines), [
    `TIME [error] PID#TID: *N connect() failed (${REFUSED}) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:${dead}/loginms", host: "localhost:8081"`,
    `TIME [warn] PID#TID: *N upstream server temporarily disabled while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://127.0.0.1:${dead}/loginms", host: "localhost:8081"`,
  ]);
  // Within fail_timeout the primary is not tried: no new lines.
  for (let i = 0; i < 3; i++) {
    match(await rawRequest(gw.port, post("/api/x")), /^HTTP\/1\.1 200 /);
  }
  strictEqual(gw.errorLines.length, 2);
  // After it, the primary is tried again (and fails again). Failure times
  // are whole seconds, as nginx's ngx_time(): a sub-second fail_timeout ends
  // when the second does.
  clock += 1000;
  match(await rawRequest(gw.port, post("/api/again")), /^HTTP\/1\.1 200 /);
  strictEqual(gw.errorLines.length, 4);
  match(
    gw.errorLines[2]!,
    new RegExp(`upstream: "http://127\\.0\\.0\\.1:${dead}/again"`),
  );
  strictEqual(backup.seen.length, 5);
});

Deno.test("failover: every peer down gives one line per peer, then 'no live upstreams'", async () => {
  const a = refusedPort();
  const b = refusedPort();
  await using gw = await startGateway({
    upstreamUrl: [`http://127.0.0.1:${a}`, `http://127.0.0.1:${b}`],
  });
  match(await rawRequest(gw.port, post("/api/loginms")), /^HTTP\/1\.1 502 /);
  const errors = masked(gw.errorLines.filter((l) => l.includes("[error]")));
  strictEqual(errors.length, 2);
  deepStrictEqual(
    errors.map((l) => l.match(/upstream: "([^"]+)"/)![1]).sort(),
    [`http://127.0.0.1:${a}/loginms`, `http://127.0.0.1:${b}/loginms`].sort(),
  );
  gw.errorLines.length = 0;
  const res = await rawRequest(gw.port, post("/api/loginms"));
  match(res, /^HTTP\/1\.1 502 /);
  match(res, /<h1>502 Bad Gateway<\/h1>/);
  deepStrictEqual(masked(gw.errorLines), [
    `TIME [error] PID#TID: *N no live upstreams while connecting to upstream, client: 127.0.0.1, server: localhost, request: "POST /api/loginms HTTP/1.1", upstream: "http://backend/loginms", host: "localhost:8081"`,
  ]);
});

Deno.test("failover: a single server is never marked down", async () => {
  const dead = refusedPort();
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${dead}`,
  });
  for (let i = 0; i < 3; i++) {
    match(await rawRequest(gw.port, post("/api/loginms")), /^HTTP\/1\.1 502 /);
  }
  strictEqual(gw.errorLines.length, 3);
  for (const line of gw.errorLines) match(line, /connect\(\) failed/);
});

Deno.test("failover: after a read timeout a GET moves on, a POST is not sent again", async () => {
  await using silent = startRawUpstream(async (conn, _i, self) => {
    const head = await readHead(conn);
    if (head) self.heads.push(head.split("\r\n")[0]!);
    await untilClosed(conn); // silent until the other side gives up
  });
  await using healthy = startUpstream((r) =>
    new Response(`healthy ${r.method}`)
  );
  await using gw = await startGateway({
    upstreamUrl: [silent.origin, healthy.origin],
    timeouts: { readMs: 300 },
  });
  // Round-robin: the silent server comes first for the first request.
  const get = await rawRequest(
    gw.port,
    "GET /api/g HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
  );
  match(get, /^HTTP\/1\.1 200 /);
  match(get, /healthy GET$/);
  // The silent server is now unavailable for 10 s; make the next POST meet
  // it by giving it a fresh group where it is first again.
  await using gw2 = await startGateway({
    upstreamUrl: [silent.origin, healthy.origin],
    timeouts: { readMs: 300 },
  });
  const posted = await rawRequest(gw2.port, post("/api/p"));
  match(posted, /^HTTP\/1\.1 504 /);
  strictEqual(healthy.seen.filter((r) => r.method === "POST").length, 0);
  deepStrictEqual(silent.heads, ["GET /g HTTP/1.1", "POST /p HTTP/1.1"]);
  match(
    gw2.errorLines[0]!,
    /upstream timed out \([^)]+\) while reading response header from upstream/,
  );
});
