/**
 * limit_req and limit_conn wired into the engine, beside nginx 1.22 from the
 * same nginx.conf: refusals with nginx's status, page and line (levels per
 * `*_log_level`), `*_status`, error_page on a refusal, once per request
 * across an internal redirect, and a `limit_conn` count given back when the
 * request ends. The rate is one request a minute: the excess drains by at
 * most a few thousandths while the test runs, and the masked lines compare
 * it rounded up to whole requests (`maskErrorLine`).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { rawRequest, startUpstream, waitFor } from "../_utils.ts";
import { sideBySideAhead, startSideBySide } from "../access/_side_by_side.ts";

function get(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: t\r\nConnection: close\r\n\r\n`;
}

const BUSY = { "busy.html": "busy\n" };
sideBySideAhead([BUSY]);

Deno.test("limit_req and limit_conn refuse and log in the engine as nginx 1.22", async () => {
  let arrivals = 0;
  let release: () => void = () => {};
  const held = new Promise<void>((r) => release = r);
  let releaseBoth: () => void = () => {};
  const heldBoth = new Promise<void>((r) => releaseBoth = r);
  await using upstream = startUpstream(async (seen) => {
    arrivals++;
    await (seen.target.startsWith("/both/") ? heldBoth : held);
    return new Response("ok");
  });
  await using both = await startSideBySide({
    http: [
      "limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;",
      "limit_req_zone $binary_remote_addr zone=two:1m rate=1r/m;",
      "limit_req_zone $remote_addr zone=three:1m rate=1r/m;",
      "limit_req_zone $remote_addr zone=four:1m rate=1r/m;",
      "limit_req_zone $remote_addr zone=five:1m rate=1r/m;",
      "limit_conn_zone $binary_remote_addr zone=addr:1m;",
      "limit_req_zone $binary_remote_addr zone=six:1m rate=1r/m;",
      "limit_conn_zone $binary_remote_addr zone=addr2:1m;",
    ],
    server: `
    root $HTML;
    location /lr/ { limit_req zone=one burst=1 nodelay; try_files /none =204; }
    location /lrs/ {
      limit_req zone=two; limit_req_status 429; limit_req_log_level warn;
      add_header X-Added yes always;
      try_files /none =204;
    }
    location /lri/ { limit_req zone=three; try_files /none /lr2/; }
    location /lr2/ { limit_req zone=four; try_files /none =204; }
    location /lrp/ {
      limit_req zone=five; error_page 503 /busy.html; try_files /none =204;
    }
    location = /busy.html { }
    location /lc/ {
      limit_conn addr 1;
      proxy_pass http://127.0.0.1:${upstream.port}/;
    }
    location /both/ {
      limit_conn addr2 1;
      limit_req zone=six;
      proxy_pass http://127.0.0.1:${upstream.port}/both/;
    }
`,
    files: BUSY,
  });
  const cases = [
    "/lr/",
    "/lr/",
    "/lr/",
    "/lr/",
    "/lrs/",
    "/lrs/",
    "/lri/",
    "/lr2/",
    "/lr2/",
    "/lrp/",
    "/lrp/",
  ];
  const statuses: string[] = [];
  for (const path of cases) {
    const { ours, theirs } = await both.exchange(get(path));
    deepStrictEqual(ours, theirs, path);
    statuses.push(ours.status.split(" ")[1]!);
  }
  deepStrictEqual(statuses, [
    "204",
    "204",
    "503",
    "503",
    "204",
    "429",
    "204",
    "204",
    "503",
    "204",
    "503",
  ]);

  // limit_conn: one request held upstream on each side, a second refused.
  const first = [
    rawRequest(both.nginxPort, get("/lc/a")),
    rawRequest(both.port, get("/lc/a")),
  ];
  await waitFor(() => arrivals === 2);
  const { ours, theirs } = await both.exchange(get("/lc/b"));
  deepStrictEqual(ours, theirs, "/lc/b");
  strictEqual(ours.status, "HTTP/1.1 503");
  release();
  for (const answer of await Promise.all(first)) {
    strictEqual(answer.split("\r\n")[0], "HTTP/1.1 200 OK");
  }
  // The count went with the request: the next one passes on both sides.
  const again = await both.exchange(get("/lc/c"));
  deepStrictEqual(again.ours, again.theirs, "/lc/c");
  strictEqual(again.ours.status, "HTTP/1.1 200");

  // Both limits in one location: limit_req runs first (nginx runs a
  // phase's handlers in the reverse order of their modules), so the held
  // request's second is refused by it, and limit_conn counts nothing.
  const holding = [
    rawRequest(both.nginxPort, get("/both/a")),
    rawRequest(both.port, get("/both/a")),
  ];
  await waitFor(() => arrivals === 6);
  const second = await both.exchange(get("/both/b"));
  deepStrictEqual(second.ours, second.theirs, "/both/b");
  strictEqual(second.ours.errors.length, 1);
  strictEqual(second.ours.errors[0]!.includes("limiting requests"), true);
  releaseBoth();
  await Promise.all(holding);
});

Deno.test("a client that leaves during a limit_req delay is logged 499 and nothing goes upstream, as nginx 1.22", async () => {
  let arrivals = 0;
  await using upstream = startUpstream(() => {
    arrivals++;
    return new Response("ok");
  });
  await using both = await startSideBySide({
    http: ["limit_req_zone $binary_remote_addr zone=slow:1m rate=1r/m;"],
    server: `
    location /ld/ {
      limit_req zone=slow burst=5;
      access_log $LOGS/ld.log;
      proxy_pass http://127.0.0.1:${upstream.port}/;
    }`,
  });
  const lines = (side: "ours" | "theirs") => both.logLines("ld.log")[side];
  for (
    const [side, port] of [["ours", both.port], [
      "theirs",
      both.nginxPort,
    ]] as const
  ) {
    // The first passes; the second waits a minute, and its client leaves.
    await rawRequest(port, get("/ld/"));
    await waitFor(() => lines(side).length === 1);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode(get("/ld/")));
    if (side === "ours") {
      await waitFor(() =>
        both.ourErrors().some((l) => l.includes("delaying request"))
      );
    }
    conn.close();
    await waitFor(() => lines(side).length === 2);
  }
  const statuses = (side: "ours" | "theirs") =>
    lines(side).map((l) => l.split('" ')[1]!.slice(0, 3));
  deepStrictEqual(statuses("ours"), ["200", "499"]);
  deepStrictEqual(statuses("theirs"), ["200", "499"]);
  strictEqual(arrivals, 2);
  strictEqual(
    both.ourErrors().filter((l) => l.includes("prematurely")).length,
    1,
  );
});
