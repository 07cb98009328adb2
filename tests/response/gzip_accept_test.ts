import { strictEqual } from "node:assert/strict";
import { gzipAccepted } from "../../src/response/mod.ts";

Deno.test("gzipAccepted() reads Accept-Encoding as ngx_http_gzip_ok does", async (t) => {
  const cases: [string | null, boolean][] = [
    [null, false],
    ["", false],
    ["gzip", true],
    ["GZIP", true],
    ["gzip,deflate", true],
    ["gzip, deflate, br, zstd", true],
    ["deflate, gzip", true],
    ["deflate,gzip", true],
    ["br;q=1.0, gzip;q=0.8", true],
    ["gzip;q=0", false],
    ["gzip;q=0.000", false],
    ["gzip; q=0", false],
    ["gzip;q=1", true],
    ["gzip;q=0.5", true],
    ["gzip;q=0.0001", false], // more than three decimals
    ["gzip;q=2", false],
    ["gzip;level=1", false], // not q: nginx declines
    ["x-gzip", false],
    ["*", false], // nginx does not read *
    ["identity", false],
    ["gzipx", false],
    ["gzip ", true],
    ["deflate, gzip ;q=1", true], // nginx skips spaces before the ;
  ];
  for (const [ae, want] of cases) {
    await t.step(JSON.stringify(ae), () => {
      const headers = new Headers();
      if (ae !== null) headers.set("accept-encoding", ae);
      strictEqual(gzipAccepted({ headers, protocol: "HTTP/1.1" }), want);
    });
  }
});

Deno.test("gzipAccepted() declines HTTP/1.0 and a request with Via (gzip_proxied off)", () => {
  const headers = new Headers({ "accept-encoding": "gzip" });
  strictEqual(gzipAccepted({ headers, protocol: "HTTP/1.0" }), false);
  strictEqual(gzipAccepted({ headers, protocol: "HTTP/2.0" }), true);
  headers.set("via", "1.1 proxy");
  strictEqual(gzipAccepted({ headers, protocol: "HTTP/1.1" }), false);
});
