/**
 * A request with a body whose answer goes through `error_page` to a
 * proxied or FastCGI location, beside nginx 1.22 on the same nginx.conf:
 * what the page's upstream receives (the method, `Content-Length`, the
 * body; for FastCGI `REQUEST_METHOD`, `CONTENT_LENGTH` and `STDIN`) and
 * what the client gets. nginx turns the method into GET (HEAD stays) for a
 * URI page (`ngx_http_send_error_page`), keeps it for a named one, and the
 * body goes on as the first location left it: read, or still unread.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  type RawUpstream,
  readHead,
  refusedPort,
  startRawUpstream,
  writeText,
} from "./_utils.ts";
import { bothSides, PROCESS, TEMP } from "./_same_conf.ts";
import { startFastcgiResponder } from "./_fastcgi_responder.ts";
import { suiteNeeds } from "./_prerequisites.ts";

const NEEDS = suiteNeeds("error_page_body_nginx_test.ts", ["nginx"]);

function conf(
  port: number,
  up: { http: number; fastcgi: number; refused: number },
): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http};`;
  const fastcgi = `fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_LENGTH $content_length;
      fastcgi_param CONTENT_TYPE $content_type;
      fastcgi_param DOCUMENT_URI $document_uri;`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location = /pp { ${proxied} }
    location = /pf { ${fastcgi} }
    location @np { ${proxied} }
    location @nf { ${fastcgi} }
    location /ret/p { return 404; error_page 404 /pp; }
    location /ret/f { return 404; error_page 404 /pf; }
    location /ret/np { return 404; error_page 404 @np; }
    location /ret/nf { return 404; error_page 404 @nf; }
    location /ret/eq { return 404; error_page 404 =200 /pp; }
    location /down/p { proxy_pass http://127.0.0.1:${up.refused}; error_page 502 /pp; }
    location /down/f { proxy_pass http://127.0.0.1:${up.refused}; error_page 502 /pf; }
    location /int/p { ${proxied} proxy_intercept_errors on; error_page 500 /pp; }
    location /int/f { ${proxied} proxy_intercept_errors on; error_page 500 /pf; }
    location /fint/p { ${fastcgi} fastcgi_intercept_errors on; error_page 500 /pp; }
    location /static/ { error_page 405 /pf; }
  }
}
`;
}

/** What an upstream received, as compared. */
type Received = Record<string, string>;

/** Method, path, and the body's framing: its length, or chunked. */
const REQUESTS: [string, string, "length" | "chunked"][] = [
  ["POST", "/ret/p", "length"],
  ["POST", "/ret/f", "length"],
  ["POST", "/ret/np", "length"],
  ["POST", "/ret/nf", "length"],
  ["POST", "/ret/eq", "length"],
  ["PUT", "/ret/f", "length"],
  ["POST", "/down/p", "length"],
  ["POST", "/down/f", "length"],
  ["POST", "/int/p", "length"],
  ["POST", "/int/f", "length"],
  ["POST", "/fint/p", "length"],
  ["POST", "/static/page.html", "length"],
  ["POST", "/ret/f", "chunked"],
  ["POST", "/down/p", "chunked"],
  ["POST", "/int/f", "chunked"],
];

Deno.test(
  "a body's request through error_page to proxy_pass or fastcgi_pass: what the page's upstream gets, as nginx 1.22",
  NEEDS,
  async () => {
    const got: Record<string, Received[]> = { nginx: [], gateway: [] };
    const upstreams = {
      nginx: { http: recording(got.nginx!), fastcgi: startFastcgiResponder() },
      gateway: {
        http: recording(got.gateway!),
        fastcgi: startFastcgiResponder(),
      },
    };
    await using _n1 = upstreams.nginx.http;
    await using _n2 = upstreams.nginx.fastcgi;
    await using _g1 = upstreams.gateway.http;
    await using _g2 = upstreams.gateway.fastcgi;
    const refused = refusedPort();
    await using both = await bothSides(
      (port, side) =>
        conf(port, {
          http: upstreams[side].http.port,
          fastcgi: upstreams[side].fastcgi.port,
          refused,
        }),
      {
        prepare: async (prefix) => {
          await Deno.mkdir(`${prefix}/html/static`, { recursive: true });
          await Deno.writeTextFile(`${prefix}/html/static/page.html`, "x");
        },
      },
    );
    for (const [method, path, framing] of REQUESTS) {
      const answers: Record<string, unknown> = {};
      for (const side of ["nginx", "gateway"] as const) {
        const port = both[side].port;
        const fcgi = upstreams[side].fastcgi;
        const before = fcgi.seen.length;
        const raw = await rawRequest(
          port,
          `${method} ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\n` +
            (framing === "length"
              ? "Content-Length: 5\r\nConnection: close\r\n\r\nhello"
              : "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                "5\r\nhello\r\n0\r\n\r\n"),
        );
        const seen = fcgi.seen.slice(before).map((s) => {
          const param = (name: string) =>
            s.params.find(([n]) => n === name)?.[1] ?? "(none)";
          return {
            via: "fastcgi",
            method: param("REQUEST_METHOD"),
            uri: param("DOCUMENT_URI"),
            length: param("CONTENT_LENGTH"),
            type: param("CONTENT_TYPE"),
            body: s.body,
          };
        });
        answers[side] = {
          // The code: the reason phrases are each side's own (README).
          status: raw.slice(9, 12),
          http: got[side]!.splice(0),
          fastcgi: seen,
        };
      }
      deepStrictEqual(
        answers.gateway,
        answers.nginx,
        `${method} ${path} (${framing})`,
      );
    }
  },
);

/**
 * An upstream that records each request whole (Deno.serve gives a GET no
 * body, and the page's request is a GET that may carry one), answering
 * 500 under `/int/` and 200 elsewhere.
 */
function recording(into: Received[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    let text = await readHead(conn);
    if (text === null) return;
    const end = text.indexOf("\r\n\r\n");
    const head = text.slice(0, end);
    const length = Number(
      /\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? "0",
    );
    const buf = new Uint8Array(1024);
    // Bounded by the declared length (a test's own small body).
    while (text.length - end - 4 < length) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    const [method, target] = head.split(" ");
    into.push({
      via: "http",
      method: method!,
      target: target!,
      length: /\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? "(none)",
      chunked: /\r\ntransfer-encoding: *([^\r]*)/i.exec(head)?.[1] ?? "(none)",
      body: text.slice(end + 4),
    });
    const status = target!.startsWith("/int/") ? "500 Failed" : "200 OK";
    await writeText(
      conn,
      `HTTP/1.1 ${status}\r\nContent-Length: 4\r\nConnection: close\r\n\r\npage`,
    );
  });
}
