import { strictEqual } from "node:assert/strict";
import { gzipAccepted, NGINX_GZIP_OK } from "../../src/response/mod.ts";
import type { GzipOkConf, GzipProxied } from "../../src/engine/mod.ts";

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

Deno.test("gzipAccepted() under gzip_proxied, gzip_http_version and gzip_disable, as ngx_http_gzip_ok", async (t) => {
  const conf = (over: Partial<GzipOkConf>): GzipOkConf => ({
    ...NGINX_GZIP_OK,
    ...over,
  });
  const proxied = (...flags: GzipProxied[]) =>
    conf({ proxied: new Set(flags) });
  const past = "Thu, 01 Jan 1970 00:00:01 GMT";
  const date = "Thu, 01 Jan 1970 00:01:00 GMT";
  const cases: [
    string,
    GzipOkConf,
    Record<string, string>,
    Record<string, string> | null,
    boolean,
  ][] = [
    ["no Via: gzip_proxied is not read", proxied("off"), {}, {}, true],
    ["Via, off", proxied("off"), { via: "1.1 p" }, {}, false],
    ["Via, any", proxied("any"), { via: "1.1 p" }, {}, true],
    [
      "Via, off wins over any",
      proxied("off", "any"),
      { via: "1.1 p" },
      {},
      false,
    ],
    [
      "auth with Authorization",
      proxied("auth"),
      { via: "x", authorization: "Basic eDp5" },
      { "cache-control": "max-age=1" },
      true,
    ],
    [
      "auth without Authorization, Cache-Control",
      proxied("auth"),
      { via: "x" },
      { "cache-control": "max-age=1" },
      false,
    ],
    ["expired: Expires before Date", proxied("expired"), { via: "x" }, {
      expires: past,
      date,
    }, true],
    ["expired: Expires after Date", proxied("expired"), { via: "x" }, {
      expires: date,
      date: past,
    }, false],
    ["expired: Expires that is no date", proxied("expired"), { via: "x" }, {
      expires: "0",
    }, false],
    ["Expires without expired", proxied("no-cache"), { via: "x" }, {
      expires: past,
    }, false],
    ["no-cache", proxied("no-cache"), { via: "x" }, {
      "cache-control": "public, No-Cache",
    }, true],
    ["no-cache is a whole token", proxied("no-cache"), { via: "x" }, {
      "cache-control": "no-cache-x",
    }, false],
    ["no-store", proxied("no-store"), { via: "x" }, {
      "cache-control": "no-store",
    }, true],
    ["private", proxied("private"), { via: "x" }, {
      "cache-control": "max-age=0,private",
    }, true],
    ["private with a value does not count", proxied("private"), { via: "x" }, {
      "cache-control": 'private="x"',
    }, false],
    ["Cache-Control none of the flags take", proxied("private"), { via: "x" }, {
      "cache-control": "max-age=60",
    }, false],
    [
      "neither: falls through to gzip",
      proxied("expired"),
      { via: "x" },
      {},
      true,
    ],
    [
      "no_last_modified with Last-Modified",
      proxied("no_last_modified"),
      { via: "x" },
      { "last-modified": past },
      false,
    ],
    [
      "no_etag with ETag",
      proxied("no_etag"),
      { via: "x" },
      { etag: '"a"' },
      false,
    ],
    ["no_etag without ETag", proxied("no_etag"), { via: "x" }, {}, true],
    [
      "gzip_static asks before the response",
      proxied("expired"),
      { via: "x" },
      null,
      true,
    ],
    [
      "gzip_disable regex, caseless",
      conf({ disable: [/^curl\//i] }),
      { "user-agent": "CURL/8" },
      {},
      false,
    ],
    [
      "gzip_disable regex not matching",
      conf({ disable: [/^curl\//i] }),
      { "user-agent": "Mozilla/5.0" },
      {},
      true,
    ],
    [
      "msie6: MSIE 6.0",
      conf({ disableMsie6: true }),
      { "user-agent": "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)" },
      {},
      false,
    ],
    [
      "msie6: MSIE 6.0 SV1",
      conf({ disableMsie6: true }),
      {
        "user-agent": "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)",
      },
      {},
      true,
    ],
    [
      "msie6: MSIE 5.5",
      conf({ disableMsie6: true }),
      { "user-agent": "Mozilla/4.0 (compatible; MSIE 5.5)" },
      {},
      false,
    ],
    [
      "msie6: MSIE 7.0",
      conf({ disableMsie6: true }),
      { "user-agent": "Mozilla/4.0 (compatible; MSIE 7.0)" },
      {},
      true,
    ],
    [
      "msie6: Opera posing as MSIE",
      conf({ disableMsie6: true }),
      { "user-agent": "Mozilla/4.0 (compatible; MSIE 6.0) Opera 9" },
      {},
      true,
    ],
  ];
  for (const [what, c, request, response, want] of cases) {
    await t.step(what, () => {
      const headers = new Headers({ "accept-encoding": "gzip", ...request });
      const fields = response === null ? null : new Headers(response);
      strictEqual(
        gzipAccepted({ headers, protocol: "HTTP/1.1" }, c, fields),
        want,
      );
    });
  }
  await t.step("gzip_http_version 1.0 takes an HTTP/1.0 request", () => {
    const headers = new Headers({ "accept-encoding": "gzip" });
    strictEqual(
      gzipAccepted(
        { headers, protocol: "HTTP/1.0" },
        conf({ httpVersion: "1.0" }),
      ),
      true,
    );
  });
});
