import { strictEqual } from "node:assert/strict";
import { publicOrigin } from "../../src/response/mod.ts";

Deno.test("publicOrigin() takes the Host name as nginx validates it and the listening port", async (t) => {
  const cases: [string | null, number, string][] = [
    ["localhost:8081", 8081, "http://localhost:8081"],
    ["localhost", 8081, "http://localhost:8081"],
    ["station7:9999", 8081, "http://station7:8081"],
    ["[::1]:8081", 8081, "http://[::1]:8081"],
    ["[fe80::1]", 80, "http://[fe80::1]"],
    ["example", 80, "http://example"],
    ["KomikApp.com:8081", 8081, "http://komikapp.com:8081"],
    ["Station7.Example.:9999", 8081, "http://station7.example:8081"],
    ["[FE80::1]:8081", 8081, "http://[fe80::1]:8081"],
    ["", 8081, "http://127.0.0.1:8081"],
    [null, 8081, "http://127.0.0.1:8081"],
  ];
  for (const [host, port, expected] of cases) {
    await t.step(`${host} ${port}`, () => {
      strictEqual(publicOrigin(host, port), expected);
    });
  }
});
