/**
 * A limit_req storm against the gateway: 4,000 requests over 16
 * keep-alive connections, every other one from 600 keys taken in turn (more
 * than the 32k zone holds, so it evicts as nginx's does: the storm goes
 * round them three times and more) and the rest from 8 keys that stay in the
 * zone and are refused past their burst. Every request is answered, every
 * refusal has nginx's line, and the gateway answers after it. (600 keys
 * alone were never refused: each was evicted before its turn came again,
 * so 10,000 of them proved no refusal's line.) The zone's bound itself
 * is a table test in limit_req_test.ts. The gateway runs in this process
 * (`startMain`): the gate runs without `--trace-leaks`, and there a
 * `deno run` of the gateway cost more CPU than the storm in process; a run
 * with `--trace-leaks` traces the storm's operations too.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest, waitFor } from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { startStorm } from "../_keep_alive.ts";
import { nginxPrefix } from "../_prefix.ts";

const STORM = 4_000;
const CONNECTIONS = 16;
const KEYS = 600;
const HOT_KEYS = 8;

Deno.test("a limit_req storm is answered and each refusal logged, in a bounded zone", async () => {
  await using p = await nginxPrefix((prefix) =>
    `events {}
http {
  error_log ${prefix}/logs/error.log;
  access_log off;
  limit_req_zone $http_x_key zone=storm:32k rate=1r/m;
  server {
    listen 127.0.0.1:0;
    location /lr/ {
      limit_req zone=storm burst=1 nodelay;
      try_files /none =204;
    }
    location /free/ { return 200 "free\\n"; }
  }
}
`, { name: "limit-storm-" });
  await using gw = await startMain(["--nginx-conf", p.conf]);
  using storm = await startStorm({
    hostname: "127.0.0.1",
    port: gw.port,
    connections: CONNECTIONS,
    requests: STORM,
    request: (n) =>
      `GET /lr/ HTTP/1.1\r\nHost: s\r\nX-Key: ${
        n % 2 === 0 ? `k${(n / 2) % KEYS}` : `hot${((n - 1) / 2) % HOT_KEYS}`
      }\r\n\r\n`,
  });
  await storm.done;
  const { statuses } = storm;
  const passed = statuses.get("HTTP/1.1 204") ?? 0;
  const refused = statuses.get("HTTP/1.1 503") ?? 0;
  strictEqual(passed + refused, STORM, JSON.stringify([...statuses]));
  // Each key passes once and once more in its burst (rate=1r/m): the hot
  // keys' other requests are refused, all but 2 * HOT_KEYS of the half
  // (1,984). Half of that: a storm slower than a minute on a loaded
  // machine lets each hot key pass once more a minute.
  ok(refused >= STORM / 4, JSON.stringify([...statuses]));
  const log = join(p.prefix, "logs", "error.log");
  const lines = () =>
    Deno.readTextFileSync(log).split("\n").filter((l) =>
      l.includes("limiting requests, excess: ")
    ).length;
  await waitFor(() => lines() >= refused, 30_000);
  strictEqual(lines(), refused);
  const free = await rawRequest(
    gw.port,
    "GET /free/ HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n",
  );
  strictEqual(free.slice(9, 12), "200");
});
