/**
 * `error_page` chains as nginx 1.22 runs them, side by side with it: with
 * `recursive_error_pages on` a loop of pages ends after nginx's ten URI
 * changes with its 500 and cycle line; without it, after the first page.
 */
import { deepStrictEqual } from "node:assert/strict";
import { startSideBySide } from "../access/_side_by_side.ts";

Deno.test("an error_page loop ends as nginx's does: the 500 and its cycle line, or the first page's status", async () => {
  await using s = await startSideBySide({
    server: `
    location /pair-a { recursive_error_pages on; error_page 404 /pair-b; return 404; }
    location /pair-b { recursive_error_pages on; error_page 404 /pair-a; return 404; }
    location /self { recursive_error_pages on; error_page 403 /self; return 403; }
    location /once-a { error_page 404 /once-b; return 404; }
    location /once-b { error_page 404 /once-a; return 404; }
    location /code { recursive_error_pages on; error_page 404 =410 /code; return 404; }
  `,
  });
  const seen: [string, string, string[]][] = [];
  for (const path of ["/pair-a", "/self", "/once-a", "/code"]) {
    const { ours, theirs } = await s.exchange(
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    deepStrictEqual(
      [ours.status, ours.errors, ours.access],
      [theirs.status, theirs.errors, theirs.access],
      path,
    );
    seen.push([path, ours.status, ours.errors.map((l) => l.split(", ")[0]!)]);
  }
  const cycle = (to: string) =>
    `TIME [error] PID#TID: *N rewrite or internal redirection cycle while internally redirecting to "${to}"`;
  deepStrictEqual(seen, [
    ["/pair-a", "HTTP/1.1 500", [cycle("/pair-b")]],
    ["/self", "HTTP/1.1 500", [cycle("/self")]],
    ["/once-a", "HTTP/1.1 404", []],
    ["/code", "HTTP/1.1 500", [cycle("/code")]],
  ]);
});

Deno.test("recursive_error_pages is decided where the first error found its page: a later location's on cannot reopen the chain", async () => {
  // nginx's r->error_page is set by the first location with the flag off
  // and never cleared (ngx_http_special_response_handler).
  await using s = await startSideBySide({
    server: `
    location /off-on { error_page 404 = /off-on-2; return 404; }
    location /off-on-2 { recursive_error_pages on; error_page 404 = /end; return 404; }
    location /on-off { recursive_error_pages on; error_page 404 = /on-off-2; return 404; }
    location /on-off-2 { error_page 404 = /end; return 404; }
    location /on-off-off { recursive_error_pages on; error_page 404 = /on-off-off-2; return 404; }
    location /on-off-off-2 { error_page 404 = /on-off-off-3; return 404; }
    location /on-off-off-3 { recursive_error_pages on; error_page 404 = /end; return 404; }
    location /on-on { recursive_error_pages on; error_page 404 = /on-on-2; return 404; }
    location /on-on-2 { recursive_error_pages on; error_page 404 = /end; return 404; }
    location /named { error_page 404 = @two; return 404; }
    location @two { recursive_error_pages on; error_page 404 = @end; return 404; }
    location @end { return 200 "end"; }
    location /end { return 200 "end"; }
  `,
  });
  const seen: [string, string][] = [];
  for (
    const path of ["/off-on", "/on-off", "/on-off-off", "/on-on", "/named"]
  ) {
    const { ours, theirs } = await s.exchange(
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    deepStrictEqual(
      [ours.status, ours.errors, ours.access],
      [theirs.status, theirs.errors, theirs.access],
      path,
    );
    seen.push([path, ours.status]);
  }
  deepStrictEqual(seen, [
    ["/off-on", "HTTP/1.1 404"],
    ["/on-off", "HTTP/1.1 200"],
    ["/on-off-off", "HTTP/1.1 404"],
    ["/on-on", "HTTP/1.1 200"],
    ["/named", "HTTP/1.1 404"],
  ]);
});

Deno.test("a proxied 502 chain with recursive_error_pages on only in its second location asks the upstream as often as nginx", async () => {
  let asked = 0;
  await using upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      asked++;
      await req.body?.cancel();
      return new Response("bad", { status: 502 });
    },
  );
  await using s = await startSideBySide({
    http: [`upstream up { server 127.0.0.1:${upstream.addr.port}; }`],
    server: `
    location /d { proxy_pass http://up; proxy_intercept_errors on; error_page 502 = @chain; }
    location @chain { rewrite ^ /fail2 break; proxy_pass http://up; proxy_intercept_errors on; recursive_error_pages on; error_page 502 = @named; }
    location @named { return 200 "named"; }
  `,
  });
  const { ours, theirs } = await s.exchange(
    "POST /d/fail HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab",
  );
  deepStrictEqual(
    [ours.status, ours.body, ours.errors, ours.access],
    [theirs.status, theirs.body, theirs.errors, theirs.access],
  );
  // /d/fail and /fail2 on each side: @named is never reached.
  deepStrictEqual([ours.status, asked], ["HTTP/1.1 502", 4]);
});
