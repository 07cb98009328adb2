/**
 * A body streamed to the first upstream (`proxy_request_buffering off`),
 * then an internal redirect (the upstream's `X-Accel-Redirect`, an
 * `error_page`) to a FastCGI location with `fastcgi_pass_request_body
 * off`, beside nginx 1.22 on the same nginx.conf: the target sends no
 * body, so nothing is missing, and nginx answers it (200) with
 * `CONTENT_LENGTH` still the client's. A target that would send the body
 * is the gateway's own 500 (README, **error-page**), not compared here:
 * nginx sends it the length without the bytes and waits on its upstream.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  type RawUpstream,
  readHead,
  refusedPort,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import {
  bothSides,
  logLines,
  PROCESS,
  sideUpstreams,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("request/streamed_body_redirect_nginx_test.ts", [
  "nginx",
]);

/** Where the upstream's `X-Accel-Redirect` sends each path. */
const ACCEL: Record<string, string> = {
  "/acc/nb": "/nb/a",
  "/acc/nbnamed": "@nb",
};

function conf(
  port: number,
  up: { http: number; fastcgi: number; refused: number },
): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http};`;
  const nobody = `fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_pass_request_body off;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_LENGTH $content_length;`;
  const down = `proxy_pass http://127.0.0.1:${up.refused};`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  proxy_request_buffering off;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location /acc/ { ${proxied} }
    location /nb/ { ${nobody} }
    location @nb { ${nobody} }
    location /down/ { ${down} error_page 502 = /nb/ep; }
    location /icpt/ { ${proxied} proxy_intercept_errors on;
      error_page 500 = /nb/ep; }
  }
}
`;
}

const PATHS = ["/acc/nb", "/acc/nbnamed", "/down/a", "/icpt/a"];

/**
 * Sizes of a body in one read and past a read, sent with `Content-Length`,
 * and chunked when negative (the gateway reads a chunked body ahead, and
 * nginx reads it whole for HTTP/1.0 upstreams: its length then is what was
 * received).
 */
const SIZES = [5, 100_000, -5, -100_000];

Deno.test(
  "a body streamed upstream, then an X-Accel-Redirect or error_page to fastcgi_pass_request_body off: answered, CONTENT_LENGTH the client's, as nginx 1.22",
  NEEDS,
  async () => {
    const got: Record<string, string[]> = { nginx: [], gateway: [] };
    await using upstreams = sideUpstreams((side) => recording(got[side]!));
    const refused = refusedPort();
    await using both = await bothSides((port, side) =>
      conf(port, {
        http: upstreams[side].http.port,
        fastcgi: upstreams[side].fastcgi.port,
        refused,
      })
    );
    const seen: Record<string, Record<string, unknown>> = {
      nginx: {},
      gateway: {},
    };
    for (const path of PATHS) {
      for (const size of SIZES) {
        const row = `POST ${path} (${size} bytes)`;
        for (const side of ["nginx", "gateway"] as const) {
          const { port, prefix } = both[side];
          const fcgi = upstreams[side].fastcgi;
          const before = {
            fastcgi: fcgi.seen.length,
            errors: logLines(prefix, "error.log").length,
            access: logLines(prefix, "access.log").length,
          };
          const n = Math.abs(size);
          const raw = await rawRequest(
            port,
            size > 0
              ? `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Length: ${size}\r\n` +
                `Connection: close\r\n\r\n${"b".repeat(size)}`
              : `POST ${path} HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n` +
                `Connection: close\r\n\r\n${n.toString(16)}\r\n${
                  "b".repeat(n)
                }\r\n0\r\n\r\n`,
          );
          // The request's error lines are written by its access line.
          await waitFor(
            () => logLines(prefix, "access.log").length > before.access,
            5000,
          );
          const ports = new RegExp(`:${upstreams[side].http.port}\\b`, "g");
          seen[side]![row] = {
            status: raw.slice(9, 12),
            http: got[side]!.splice(0),
            fastcgi: fcgi.seen.slice(before.fastcgi).map((s) => {
              const param = (name: string) =>
                s.params.find(([n]) => n === name)?.[1] ?? "(none)";
              return `${param("REQUEST_METHOD")} CONTENT_LENGTH=${
                param("CONTENT_LENGTH")
              } ${s.body.length}`;
            }),
            errors: logLines(prefix, "error.log").slice(before.errors)
              .filter((l) => !l.includes("[notice]"))
              .map((l) => maskErrorLine(l).replace(ports, ":UP")),
          };
        }
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/**
 * An upstream that reads each request's body (its declared length),
 * records its line and size, and answers the `X-Accel-Redirect` of
 * {@linkcode ACCEL} for its paths, 500 for `/icpt/` (its `error_page`),
 * 200 elsewhere.
 */
function recording(into: string[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    let text = await readHead(conn);
    if (text === null) return;
    const end = text.indexOf("\r\n\r\n");
    const head = text.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const buf = new Uint8Array(16 * 1024);
    // Bounded by the declared length (a test's own body).
    const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
    while (
      chunked ? !text.endsWith("0\r\n\r\n") : text.length - end - 4 < length
    ) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    const [method, target] = head.split(" ");
    into.push(
      `${method} ${target} ${chunked ? "chunked " : ""}${
        text.length - end - 4
      }`,
    );
    const accel = ACCEL[target!];
    await writeText(
      conn,
      `HTTP/1.1 ${target!.startsWith("/icpt/") ? 500 : 200} OK\r\n${
        accel === undefined ? "" : `X-Accel-Redirect: ${accel}\r\n`
      }Content-Length: 4\r\nConnection: close\r\n\r\npage`,
    );
  });
}
