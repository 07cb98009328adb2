/**
 * `fastcgi_pass` to an `upstream{}` balanced by `hash`: the key chooses the
 * server, as for `proxy_pass` (the choice itself is nginx's, side by side
 * in tests/upstream/balance_methods_nginx_test.ts).
 */
import { strictEqual } from "node:assert/strict";
import { rawRequest } from "../_utils.ts";
import { startFastcgiResponder } from "../_fastcgi_responder.ts";
import { compileText } from "../engine/_conf.ts";
import { serveCompiled } from "../proxy/_location.ts";

Deno.test("fastcgi_pass to a hash group sends one key to one server, with or without consistent", async (t) => {
  for (const method of ["hash $request_uri", "hash $request_uri consistent"]) {
    await t.step(method, async () => {
      await using a = startFastcgiResponder();
      await using b = startFastcgiResponder();
      await using gw = serveCompiled(compileText(`http {
  upstream php { ${method}; server 127.0.0.1:${a.port}; server 127.0.0.1:${b.port}; }
  server { listen 8081;
    location / { fastcgi_pass php; fastcgi_param SCRIPT_NAME $fastcgi_script_name; }
  }
}`));
      for (let i = 0; i < 6; i++) {
        await rawRequest(
          gw.port,
          "GET /same.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
      }
      // Round-robin would give each three.
      strictEqual(Math.max(a.seen.length, b.seen.length), 6);
    });
  }
});
