/**
 * errorResponse() for every status nginx finalizes with: a page with
 * nginx's title for errors, and for the statuses that carry no body
 * (`try_files … =204`, a 304) a head alone that error_page leaves alone.
 */
import { deepStrictEqual } from "node:assert/strict";
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
