/**
 * unansweredResponse(): what stands for nginx's close without an answer
 * (408, 444, 499: ngx_http_finalize_request terminates the request) is
 * read by nobody, is no built-in page (no error_page runs for it) and is
 * marked for the gateway to close its connection.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import {
  closesUnanswered,
  isBuiltInError,
  isUnanswered,
  isUnread,
  unansweredResponse,
} from "../../src/response/mod.ts";

Deno.test("408, 444 and 499 close without an answer: unansweredResponse() is unread, no page, no error_page", () => {
  deepStrictEqual(
    [408, 444, 499, 400, 404, 500].map(closesUnanswered),
    [true, true, true, false, false, false],
  );
  const response = unansweredResponse(444);
  ok(isUnanswered(response) && isUnread(response));
  deepStrictEqual(
    [response.status, response.body, isBuiltInError(response)],
    [444, null, false],
  );
});
