/**
 * Variables that read the machine rather than the request, in a gateway
 * run with its own permissions: they answer, never a 500.
 */
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest, refusedPort, spawnGateway } from "../_utils.ts";

Deno.test("$hostname is the machine's name in lower case, under the gateway's run flags", async () => {
  const prefix = await Deno.makeTempDir({ prefix: "vars-gw-" });
  try {
    await Deno.mkdir(join(prefix, "logs"));
    const conf = join(prefix, "nginx.conf");
    await Deno.writeTextFile(
      conf,
      `events {}
http {
  error_log ${prefix}/logs/error.log;
  access_log off;
  server {
    listen 127.0.0.1:${refusedPort()};
    location / { add_header X-Host $hostname; return 200 "$hostname $pid\\n"; }
  }
}`,
    );
    await using gw = await spawnGateway(["--nginx-conf", conf]);
    const raw = await rawRequest(
      gw.port,
      "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    );
    const name = Deno.hostname().toLowerCase();
    strictEqual(raw.slice(9, 12), "200");
    strictEqual(raw.toLowerCase().includes(`\r\nx-host: ${name}\r\n`), true);
    strictEqual(raw.split("\r\n\r\n")[1], `${name} ${gw.child.pid}\n`);
  } finally {
    await Deno.remove(prefix, { recursive: true });
  }
});
