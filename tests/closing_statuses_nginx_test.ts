/**
 * After its own page for 400, 413, 414, 500 or 501 nginx drops keep-alive
 * (`ngx_http_special_response_handler`): a request pipelined behind it is
 * never served, and the connection ends. Beside nginx on one
 * configuration: each status's own page, then a request behind it.
 */
import { deepStrictEqual } from "node:assert/strict";
import { sideBySideAhead, startSideBySide } from "./access/_side_by_side.ts";

/** Served after the page unless the connection ended with it. */
const BEHIND =
  "GET /ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/** The statuses a `return` answers with nginx's own page. */
const STATUSES = [
  400,
  403,
  404,
  405,
  413,
  414,
  416,
  429,
  500,
  501,
  502,
  503,
  504,
];

/**
 * Writes `text` in one write and reads until the server closes (each side
 * closes at the latest after {@linkcode BEHIND}); 10 s is a bound.
 */
async function exchange(port: number, text: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const deadline = setTimeout(() => conn.close(), 10_000);
  const chunks: string[] = [];
  try {
    await conn.write(new TextEncoder().encode(text));
    const buf = new Uint8Array(16 * 1024);
    for (let i = 0; i < 1000; i++) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(new TextDecoder("latin1").decode(buf.subarray(0, n)));
    }
    conn.close();
  } catch {
    // closed by the deadline, or reset after a cut
  } finally {
    clearTimeout(deadline);
  }
  return chunks.join("");
}

/**
 * What a side did: the first status, its `Connection` fields, and whether
 * the request behind it was served (the gateway's cut of it is a bare 400
 * head, never a 200).
 */
function seen(text: string): string {
  const first = text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? "none";
  // nginx says `keep-alive` where Deno.serve says nothing: `close` counts.
  const head = text.split("\r\n\r\n")[0] ?? "";
  const fields = [...head.matchAll(/^connection: *close$/gim)].map(() =>
    "close"
  );
  const served = /HTTP\/1\.1 200 [^\r]*\r\n(?:[^\r]+\r\n)*\r\nok$/.test(text);
  return `${first} connection=${fields.join("|")} behind=${
    served ? "served" : "not served"
  }`;
}

const FILES = { "small/a.txt": "a", "page.html": "page" };
sideBySideAhead([FILES]);

Deno.test("the gateway ends the connection after its own page wherever nginx drops keep-alive", async () => {
  await using s = await startSideBySide({
    files: FILES,
    server: [
      ...STATUSES.map((n) => `location = /r${n} { return ${n}; }`),
      `location = /ok { return 200 "ok"; }`,
      `location /small/ { client_max_body_size 1; }`,
      // An upstream's own 500 is relayed, not nginx's page: kept.
      `location = /relayed { return 500 "relayed"; }`,
      // An error_page answers the status: the connection ends after the
      // page all the same, whatever status the page goes out with.
      `location = /page.html { root $HTML; }`,
      `location = /paged { error_page 500 /page.html; return 500; }`,
      `location = /paged200 { error_page 500 =200 /page.html; return 500; }`,
      `location = /pagedurl { error_page 501 http://example.com/; return 501; }`,
      `location = /paged404 { error_page 404 =200 /page.html; return 404; }`,
      `location /smallpaged/ { client_max_body_size 1; error_page 413 =200 /page.html; }`,
    ].join("\n"),
  });
  const requests = [
    ...STATUSES.map((n) => `GET /r${n} HTTP/1.1\r\nHost: localhost\r\n\r\n`),
    // The client's own `close` is said once, by the runtime.
    "GET /%zz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    "GET /r500 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    // A body left unread: the runtime says `close` (one it had read with
    // the head gets none: gateway.ts, sayClose).
    `POST /small/a.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2048\r\n\r\n${
      "x".repeat(2048)
    }`,
    "GET /relayed HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "GET /paged HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "GET /paged200 HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "GET /pagedurl HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "GET /paged404 HTTP/1.1\r\nHost: localhost\r\n\r\n",
    `POST /smallpaged/a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2048\r\n\r\n${
      "x".repeat(2048)
    }`,
  ];
  const rows: string[][] = [];
  for (const request of requests) {
    const line = request.slice(0, request.indexOf("\r\n"));
    rows.push([
      line,
      seen(await exchange(s.port, request + BEHIND)),
      seen(await exchange(s.nginxPort, request + BEHIND)),
    ]);
  }
  deepStrictEqual(
    rows.map(([line, ours]) => [line, ours]),
    rows.map(([line, , theirs]) => [line, theirs]),
  );
});
