/**
 * `stub_status` (ngx_http_stub_status_module) beside nginx 1.22, from the
 * same nginx.conf: the page's shape, type and status, the 405 for other
 * methods, and the access lines. The counts are each server's own (nginx
 * counts the connections a test's readiness probe made): compared masked,
 * and the gateway's checked for what one client's requests make them.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { startSideBySide } from "./access/_side_by_side.ts";
import { stubStatusText } from "../src/status.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/** The page with its numbers masked. */
function shape(body: string): string {
  return body.replace(/\d+/g, "N");
}

Deno.test("stubStatusText() writes nginx's page", () => {
  strictEqual(
    stubStatusText({
      active: 3,
      accepted: 10,
      handled: 10,
      requests: 42,
      reading: 0,
      writing: 1,
      waiting: 2,
    }),
    "Active connections: 3 \nserver accepts handled requests\n 10 10 42 \nReading: 0 Writing: 1 Waiting: 2 \n",
  );
});

Deno.test(
  "stub_status answers as nginx: text/plain page, 405 for other methods, access lines",
  ON_LINUX,
  async () => {
    await using both = await startSideBySide({
      server: `
        location = /basic_status { stub_status; }
        location /nginx_status { stub_status on; }
      `,
    });
    for (const target of ["/basic_status", "/nginx_status/x"]) {
      const { ours, theirs } = await both.exchange(
        `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
      );
      strictEqual(ours.status, "HTTP/1.1 200");
      deepStrictEqual(ours.fields, theirs.fields);
      strictEqual(shape(ours.body), shape(theirs.body));
      deepStrictEqual(ours.access, theirs.access);
      // This client's connections and requests, each one at a time.
      match(ours.body, /^Active connections: 1 \n/);
      match(ours.body, /Reading: 0 Writing: 1 Waiting: 0 \n$/);
    }
    const { ours, theirs } = await both.exchange(
      "POST /basic_status HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    strictEqual(theirs.status, "HTTP/1.1 405");
    strictEqual(ours.status, theirs.status);
    deepStrictEqual(ours.access, theirs.access);
    const head = await both.exchange(
      "HEAD /basic_status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    strictEqual(head.ours.status, head.theirs.status);
    strictEqual(head.ours.body, "");
    deepStrictEqual(head.ours.fields, head.theirs.fields);
  },
);
