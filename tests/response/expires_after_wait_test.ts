/**
 * The request's clock is read once for what runs without a wait, and read
 * again after one: a static answer held back by `limit_req` (here three
 * seconds) gets an `Expires` an hour after its own `Date`, not an hour after
 * its arrival.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { startMain } from "../_in_process.ts";
import { freePort } from "../_utils.ts";

Deno.test("expires after a limit_req delay counts from the answer, not from the request's arrival", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "html"));
    await Deno.writeTextFile(join(dir, "html", "a.txt"), "a");
    const port = freePort();
    const conf = join(dir, "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `error_log ${dir}/error.log;
events {}
http {
  access_log off;
  limit_req_zone $binary_remote_addr zone=z:1m rate=20r/m;
  server {
    listen 127.0.0.1:${port};
    root ${dir}/html;
    location / { limit_req zone=z burst=1; expires 1h; }
  }
}
`,
    );
    await using _gw = await startMain(["--nginx-conf", conf]);
    // Two at once: the first is answered at once, the second three seconds
    // later (nginx's leaky bucket at 20r/m): the least delay whole-second
    // fields can tell from none (below).
    const start = Date.now();
    const answers = await Promise.all(
      [0, 1].map(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/a.txt`);
        await res.body?.cancel();
        return {
          status: res.status,
          date: Date.parse(res.headers.get("date")!),
          expires: Date.parse(res.headers.get("expires")!),
        };
      }),
    );
    deepStrictEqual(answers.map((a) => a.status), [200, 200]);
    // The bucket's delays are the point: a lower bound, never an upper one.
    ok(Date.now() - start >= 2500, `all answered in ${Date.now() - start} ms`);
    for (const { date, expires } of answers) {
      // Whole seconds, and Deno's Date is its own clock's, up to a second
      // behind: 3599 to 3601 from a clock read when answering; the second
      // answer, three seconds late, would read 3598 at most from its
      // arrival's (3599 at two seconds).
      const ahead = (expires - date) / 1000;
      ok(ahead >= 3599 && ahead <= 3601, `Expires ${ahead} s after Date`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
