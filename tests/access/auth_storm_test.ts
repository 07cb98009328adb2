/**
 * Bad input against a gateway process run from an nginx.conf with
 * `auth_basic`: one client (over ::1) sends wrong passwords for a bcrypt user
 * on 32 keep-alive connections while another client (over 127.0.0.1, to the
 * same dual-stack socket) asks with the right password: the other client is
 * answered while the storm is still in flight, every refusal of the storm has
 * its error line, and the gateway answers after it.
 *
 * The storm goes on until the other client has its answer (and for at least
 * 1,000 passwords, sixty times the client's queue of 16 checks), at most
 * 10,000: a gateway that held the other client back until the storm's checks
 * were done lets the storm run to 10,000 and fails, as the fixed 10,000 did,
 * and a sound one is not kept busy with passwords after the proof is made.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest, spawnGateway, waitFor } from "../_utils.ts";
import { startStorm } from "../_keep_alive.ts";
import { nginxPrefix } from "../_prefix.ts";

// bcrypt of "right": cost 8 for the storm's user (tens of ms a check), cost 4.
const SLOW = "$2y$08$abcdefghijklmnopqrstuuM7WmALSPQG/ubL8NksTdR4H7Y2WXZ..";
const FAST = "$2y$04$abcdefghijklmnopqrstuuFmEfrkTQnczNzw475xE2VhDrK1uwJiC";
/** The storm's bound: the other client must be answered before it. */
const STORM = 10_000;
/** The storm sends at least this many, answered or not. */
const STORM_MIN = 1_000;
const CONNECTIONS = 32;

function request(auth: string, path = "/auth/"): string {
  return `GET ${path} HTTP/1.1\r\nHost: s\r\nAuthorization: Basic ${
    btoa(auth)
  }\r\n\r\n`;
}

Deno.test("wrong passwords from one client (up to 10,000) do not hold back another, and each is logged", async () => {
  await using p = await nginxPrefix((prefix) =>
    `events {}
http {
  error_log ${prefix}/logs/error.log;
  access_log off;
  server {
    listen [::]:0;
    location /auth/ {
      auth_basic "Station";
      auth_basic_user_file htpasswd;
      try_files /none =204;
    }
    location /free/ { return 200 "free\\n"; }
  }
}
`, { name: "auth-storm-" });
  await Deno.writeTextFile(
    join(p.prefix, "conf", "htpasswd"),
    `ann:${SLOW}\nbob:${FAST}\n`,
  );
  await using gw = await spawnGateway(["--nginx-conf", p.conf]);
  let otherAnswered = false;
  using storm = await startStorm({
    hostname: "::1",
    port: gw.port,
    connections: CONNECTIONS,
    requests: STORM,
    request: (n) => request(`ann:wrong-${n}`),
    more: (sent) => sent < STORM_MIN || !otherAnswered,
  });
  // The storm is under way: its queue is full and refusals come back.
  await waitFor(() => storm.answered >= 200, 60_000);
  const free = await rawRequest(gw.port, request("bob:x", "/free/"));
  const right = await rawRequest(gw.port, request("bob:right"), 60_000);
  const answeredWhenServed = storm.answered;
  otherAnswered = true;
  strictEqual(free.slice(9, 12), "200");
  strictEqual(right.slice(9, 12), "204");
  ok(
    answeredWhenServed < STORM,
    `the storm had ${answeredWhenServed} of ${STORM} answers`,
  );
  await storm.done;
  const sent = storm.sent;
  strictEqual(storm.answered, sent);
  // Each refusal: a 401 with nginx's mismatch line, or a 503 when the
  // client's queue of checks is full, with the gateway's own line.
  const { statuses } = storm;
  const mismatches = statuses.get("HTTP/1.1 401") ?? 0;
  const busy = statuses.get("HTTP/1.1 503") ?? 0;
  strictEqual(mismatches + busy, sent, JSON.stringify([...statuses]));
  const log = join(p.prefix, "logs", "error.log");
  const count = (text: string, what: string) =>
    text.split("\n").filter((l) => l.includes(what)).length;
  await waitFor(() => {
    const text = Deno.readTextFileSync(log);
    return count(text, "[error]") >= sent;
  }, 60_000);
  const text = await Deno.readTextFile(log);
  strictEqual(count(text, 'user "ann": password mismatch'), mismatches);
  strictEqual(count(text, "too many password checks are waiting"), busy);
  const after = await rawRequest(gw.port, request("bob:right"));
  strictEqual(after.slice(9, 12), "204");
});
