/**
 * Variables that read the machine rather than the request, in a gateway
 * run with its own permissions: they answer, never a 500.
 */
import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest, refusedPort, spawnGateway } from "../_utils.ts";
import { Variables } from "../../src/engine/variables.ts";
import { requestVars } from "./_conf.ts";

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

Deno.test("$http_NAME reads the walked fields as Headers.get reads the fields themselves", async (t) => {
  const scope = new Variables(new Map(), new Set());
  // [fields as sent, variable]
  const cases: [[string, string][], string][] = [
    [[["host", "h"], ["upgrade", "websocket"]], "http_upgrade"],
    [[["host", "h"]], "http_upgrade"],
    [[["x-forwarded-for", "1.2.3.4"]], "http_x_forwarded_for"],
    [[["Accept", "a"], ["accept", "b"]], "http_accept"],
    [[["set-cookie", "a=1"], ["set-cookie", "b=2"]], "http_set_cookie"],
    [[["connection", "Upgrade, keep-alive"]], "http_connection"],
    [[], "http_host"],
  ];
  for (const [sent, name] of cases) {
    await t.step(`${name} of ${JSON.stringify(sent)}`, () => {
      const headers = new Headers();
      for (const [n, v] of sent) headers.append(n, v);
      const fields: string[] = [];
      headers.forEach((value, key) => fields.push(key, value));
      const read = scope.reader(name)!;
      const direct = read({ ...requestVars("/"), headers, fields: null });
      const walked = read({ ...requestVars("/"), headers, fields });
      strictEqual(walked, direct);
    });
  }
});
