/**
 * An upstream's `X-Accel-Redirect`, beside nginx 1.22 running the same
 * nginx.conf: the request goes on as an internal redirect (GET, `$uri` and
 * `$args` from the field, named locations too), the upstream's body is
 * dropped and the fields nginx keeps through the redirect are kept, even
 * those `proxy_hide_header` names; the URI is checked and decoded as
 * `ngx_http_parse_unsafe_uri` does on Linux;
 * `proxy_ignore_headers X-Accel-Redirect` relays the answer instead, and
 * the `X-Accel-*` fields nginx hides are hidden (and not acted on: README,
 * x-accel-fields).
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

/** What the upstream answers for each path it is asked for. */
const ANSWERS: Record<string, string> = {
  "/a/to-return": "X-Accel-Redirect: /target?q=1\r\n" +
    "Content-Type: text/x-up\r\nSet-Cookie: a=b\r\nCache-Control: no-store\r\n" +
    "Content-Disposition: inline\r\nX-Foo: bar\r\n",
  "/a/to-named": "X-Accel-Redirect: @named\r\nX-Foo: bar\r\n",
  "/a/to-file":
    "X-Accel-Redirect: /files/f%2Etxt\r\nContent-Type: text/x-up\r\n",
  "/a/to-missing": "X-Accel-Redirect: /files/none.txt\r\n",
  "/a/unsafe": "X-Accel-Redirect: /files/../secret?x=1\r\n",
  "/a/unsafe-escaped": "X-Accel-Redirect: /files/%2e%2e/secret?x=1\r\n",
  // On Linux `\` is no separator (ngx_path_separator): no `..` segment.
  "/a/backslash": "X-Accel-Redirect: /target\\..\\x\r\n",
  // A leading `.` makes no `..` segment either.
  "/a/dot": "X-Accel-Redirect: .x\r\n",
  // ngx_unescape_uri drops a broken escape's `%` (and `%a` before `z`).
  "/a/bad-escape": "X-Accel-Redirect: /target%zz%az%?q=%zz\r\n",
  "/h/hidden": "X-Accel-Redirect: /target\r\n" +
    "Content-Type: text/x-up\r\nSet-Cookie: a=b; path=/up/\r\n" +
    "Cache-Control: no-store\r\nContent-Disposition: inline\r\n" +
    "Expires: Thu, 01 Jan 2037 00:00:00 GMT\r\nAccept-Ranges: bytes\r\n" +
    "X-Foo: bar\r\n",
  "/i/ignored": "X-Accel-Redirect: /target\r\nX-Accel-Buffering: no\r\n" +
    "X-Accel-Limit-Rate: 100\r\nX-Accel-Expires: 10\r\nX-Accel-Other: 1\r\n",
};

function conf(port: number, upstream: number, root: string): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    location /a/ { proxy_pass http://127.0.0.1:${upstream}; }
    location /i/ {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_ignore_headers X-Accel-Redirect;
    }
    location /h/ {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_hide_header Content-Type;
      proxy_hide_header Set-Cookie;
      proxy_hide_header Cache-Control;
      proxy_hide_header Content-Disposition;
      proxy_hide_header Expires;
      proxy_hide_header Accept-Ranges;
      proxy_cookie_path /up/ /down/;
    }
    location /target {
      return 200 "target uri=$uri args=$args method=$request_method\\n";
    }
    location @named { return 200 "named uri=$uri method=$request_method\\n"; }
    location /files/ { root ${root}; }
    location /e/ { error_page 404 = /a/to-named; return 404; }
    location /f/ { error_page 404 /a/to-return; return 404; }
  }
}
`;
}

/**
 * The status, the fields compared (sorted) and the body; the built-in
 * pages' footer names each side (README, error-page), and so their length.
 */
function shape(raw: string): string[] {
  const footer = /<hr><center>(?:nginx\/[\d.]+|station-gateway)<\/center>/;
  if (footer.test(raw)) {
    raw = raw.replace(footer, "<hr>").replace(/\r\ncontent-length: \d+/i, "");
  }
  const end = raw.indexOf("\r\n\r\n");
  const [status = "", ...lines] = raw.slice(0, end).split("\r\n");
  const fields = lines.map((l) => {
    const colon = l.indexOf(":");
    return `${l.slice(0, colon).toLowerCase()}: ${l.slice(colon + 1).trim()}`;
  }).filter((l) =>
    /^(content-type|set-cookie|cache-control|content-disposition|expires|accept-ranges|x-|location|content-length)/
      .test(l)
  ).sort();
  return [status.split(" ")[1]!, ...fields, raw.slice(end + 4)];
}

Deno.test("an upstream's X-Accel-Redirect is followed as nginx 1.22 follows it", async (t) => {
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const path = head.split(" ")[1]!;
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\n${
        ANSWERS[path] ?? ""
      }Content-Length: 8\r\nConnection: close\r\n\r\nupstream`,
    );
  });
  const root = await Deno.makeTempDir({ prefix: "accel-" });
  try {
    await Deno.mkdir(join(root, "files"));
    await Deno.writeTextFile(join(root, "files", "f.txt"), "the file\n");
    await using both = await bothSides((port) => conf(port, up.port, root));
    const { nginx: theirs, gateway: ours } = both;
    const requests: [string, string][] = [
      ["to a return, fields kept", "GET /a/to-return"],
      ["to a named location", "GET /a/to-named"],
      ["a POST goes on as GET", "POST /a/to-return"],
      ["a HEAD stays HEAD", "HEAD /a/to-return"],
      ["to a file, its URI's escapes decoded", "GET /a/to-file"],
      ["to a missing file", "GET /a/to-missing"],
      ["an unsafe URI", "GET /a/unsafe"],
      ["an unsafe URI once decoded", "GET /a/unsafe-escaped"],
      ["a `\\` is no separator on Linux", "GET /a/backslash"],
      ["a leading `.` is no `..`", "GET /a/dot"],
      ["a broken escape loses its `%`", "GET /a/bad-escape"],
      ["the kept fields, proxy_hide_header or not", "GET /h/hidden"],
      ["ignored, the X-Accel-* fields hidden", "GET /i/ignored"],
      ["from an error page's proxied location", "GET /e/x"],
      ["from an error page's, its status kept", "GET /f/x"],
    ];
    // Each side's lines for an unsafe URI. The other lines differ in one
    // field (README, x-accel-fields).
    const errors = (prefix: string) =>
      logLines(prefix, "error.log").filter((l) => l.includes("unsafe URI"))
        .map(maskErrorLine);
    for (const [name, line] of requests) {
      await t.step(name, async () => {
        const request = `${line} HTTP/1.1\r\nHost: station\r\n` +
          "Content-Length: 0\r\nConnection: close\r\n\r\n";
        deepStrictEqual(
          shape(await rawRequest(ours.port, request, 5000)),
          shape(await rawRequest(theirs.port, request, 5000)),
        );
      });
    }
    await t.step("an unsafe URI's line", () => {
      const theirLines = errors(theirs.prefix);
      deepStrictEqual(theirLines.length, 2);
      deepStrictEqual(errors(ours.prefix), theirLines);
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
