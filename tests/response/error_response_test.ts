/**
 * errorResponse() for every status nginx finalizes with: a page with
 * nginx's title for errors, and for the statuses that carry no body
 * (`try_files … =204`, a 304) a head alone that error_page leaves alone; a
 * status nginx has no page for gets an empty body, and 495-497 nginx's 400
 * pages (ngx_http_special_response_handler).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { errorResponse, isBuiltInError } from "../../src/response/mod.ts";

Deno.test("errorResponse() answers a status without a body with its head alone", async (t) => {
  const cases: [number, boolean, string | null, boolean][] = [
    // status, has a body, Content-Type, an error_page applies
    [204, false, null, false],
    [304, false, null, false],
    [401, true, "text/html", true],
    [429, true, "text/html", true],
    [503, true, "text/html", true],
  ];
  for (const [status, body, type, builtIn] of cases) {
    await t.step(String(status), async () => {
      const response = errorResponse(status, {
        headers: { "www-authenticate": 'Basic realm="S"' },
      });
      const text = await response.text();
      deepStrictEqual(
        [
          response.status,
          text.length > 0,
          response.headers.get("content-type"),
          isBuiltInError(response),
          response.headers.get("www-authenticate"),
        ],
        [status, body, type, builtIn, 'Basic realm="S"'],
      );
    });
  }
});

Deno.test("errorResponse() answers a status nginx has no page for with an empty body, Content-Length: 0 and no type; error_page still applies", async (t) => {
  for (
    const status of [
      407,
      417,
      418,
      420,
      422,
      425,
      426,
      428,
      431,
      451,
      506,
      508,
      511,
      520,
      599,
    ]
  ) {
    await t.step(String(status), async () => {
      const response = errorResponse(status);
      deepStrictEqual(
        [
          response.status,
          await response.text(),
          response.headers.get("content-length"),
          response.headers.get("content-type"),
          isBuiltInError(response),
        ],
        [status, "", "0", null, true],
      );
    });
  }
});

Deno.test("errorResponse() answers 495, 496 and 497 with 400 and nginx's page for each", async (t) => {
  const cases: [number, string][] = [
    [495, "The SSL certificate error"],
    [496, "No required SSL certificate was sent"],
    [497, "The plain HTTP request was sent to HTTPS port"],
  ];
  for (const [status, text] of cases) {
    await t.step(String(status), async () => {
      const response = errorResponse(status);
      const page = await response.text();
      strictEqual(response.status, 400);
      strictEqual(
        page,
        `<html>\r\n<head><title>400 ${text}</title></head>\r\n<body>\r\n` +
          "<center><h1>400 Bad Request</h1></center>\r\n" +
          `<center>${text}</center>\r\n` +
          "<hr><center>station-gateway</center>\r\n</body>\r\n</html>\r\n",
      );
      strictEqual(response.headers.get("content-length"), String(page.length));
    });
  }
});
