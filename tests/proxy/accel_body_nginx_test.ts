/**
 * A request with a body whose upstream answers `X-Accel-Redirect`, from a
 * location without `error_page`, beside nginx 1.22 on the same nginx.conf:
 * what the redirected request's upstream receives (the method,
 * `Content-Length`, the body; for FastCGI `REQUEST_METHOD`,
 * `CONTENT_LENGTH` and `STDIN`) and what the client gets. nginx keeps
 * `r->request_body` (its temporary file too) through the internal
 * redirect, so the body goes on: small or past `client_body_buffer_size`,
 * with a length or chunked, from `proxy_pass` or `fastcgi_pass`, to a
 * proxied, FastCGI, named or static target. With
 * `proxy_ignore_headers X-Accel-Redirect` the answer is relayed. The
 * gateway runs in this process, and no temporary file of its prefix may be
 * open once the answers are in, on any way (a redirect to a proxied,
 * FastCGI or static target, an upstream's failure, a client gone
 * mid-body): the files are removed as they are opened, so the process's
 * descriptors are the witness (Deno's resource sanitizer does not count
 * them).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  rawRequest,
  type RawUpstream,
  readRequest,
  refusedPort,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  sideUpstreams,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("proxy/accel_body_nginx_test.ts", ["nginx"]);

/** Where the upstream's `X-Accel-Redirect` sends each path. */
const ACCEL: Record<string, string> = {
  "/acc/p": "/pp",
  "/acc/f": "/pf",
  "/acc/np": "@np",
  "/acc/s": "/static/page.html",
  "/ign/p": "/pp",
};

function conf(
  port: number,
  up: { http: number; fastcgi: number; refused: number },
): string {
  const proxied = `proxy_pass http://127.0.0.1:${up.http};`;
  const fastcgi = `fastcgi_pass 127.0.0.1:${up.fastcgi};
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_LENGTH $content_length;
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
    location /acc/ { ${proxied} }
    location /ign/ { ${proxied} proxy_ignore_headers X-Accel-Redirect; }
    location /fcgi/ { ${fastcgi} }
    location /down/ { proxy_pass http://127.0.0.1:${up.refused}; }
    location = /pp { ${proxied} }
    location = /pf { ${fastcgi} }
    location = /caught { ${proxied} }
    location @np { ${proxied} proxy_set_header X-Named 1; }
    location /static/ { }
  }
}
`;
}

/** What an upstream received, as compared. */
type Received = Record<string, string>;

/** Method and path; each is sent with each framing and size below. */
const REQUESTS: [string, string][] = [
  ["POST", "/acc/p"],
  ["PUT", "/acc/p"],
  ["POST", "/acc/f"],
  ["POST", "/acc/np"],
  ["POST", "/acc/s"],
  ["POST", "/ign/p"],
  // FastCGI's X-Accel-Redirect to a proxied location (/caught).
  ["POST", "/fcgi/x-accel.php"],
  ["POST", "/down/p"],
];

/**
 * The bodies: in memory; at client_body_buffer_size (16k: nginx's file),
 * and the gateway's last size read in memory and its first in a file (a
 * quarter past it: `fitsInMemory`); well past it.
 */
const FRAMINGS: ["length" | "chunked", number][] = [
  ["length", 5],
  ["chunked", 5],
  ["length", 16_384],
  ["length", 20_479],
  ["length", 20_480],
  ["chunked", 20_480],
  ["length", 100_000],
  ["chunked", 100_000],
];

/**
 * Each side's static target, written when the file loads: a root written
 * just before its first request waits for the gateway's settle proof.
 */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/static`, { recursive: true });
  Deno.writeTextFileSync(`${prefix}/html/static/page.html`, "x");
}
bothSidesAhead(prepare);

Deno.test(
  "a body's request redirected by an upstream's X-Accel-Redirect: what the target's upstream gets, as nginx 1.22, and no temporary file left open, a client gone mid-body too",
  NEEDS,
  async () => {
    const got: Record<string, Received[]> = { nginx: [], gateway: [] };
    await using upstreams = sideUpstreams((side) => recording(got[side]!));
    const refused = refusedPort();
    await using both = await bothSides(
      (port, side) =>
        conf(port, {
          http: upstreams[side].http.port,
          fastcgi: upstreams[side].fastcgi.port,
          refused,
        }),
      { prepare },
    );
    const rows: Record<string, unknown[]> = { nginx: [], gateway: [] };
    for (const [method, path] of REQUESTS) {
      for (const [framing, size] of FRAMINGS) {
        const body = size === 5 ? "hello" : "b".repeat(size);
        for (const side of ["nginx", "gateway"] as const) {
          const fcgi = upstreams[side].fastcgi;
          const before = fcgi.seen.length;
          const raw = await rawRequest(
            both[side].port,
            `${method} ${path} HTTP/1.1\r\nHost: t\r\n` +
              (framing === "length"
                ? `Content-Length: ${size}\r\nConnection: close\r\n\r\n${body}`
                : "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                  `${size.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
          );
          const seen = fcgi.seen.slice(before).map((s) => {
            const param = (name: string) =>
              s.params.find(([n]) => n === name)?.[1] ?? "(none)";
            return {
              via: "fastcgi",
              method: param("REQUEST_METHOD"),
              uri: param("DOCUMENT_URI"),
              length: param("CONTENT_LENGTH"),
              body: s.body.length > 64 ? `${s.body.length} bytes` : s.body,
            };
          });
          rows[side]!.push({
            row: `${method} ${path} (${framing}, ${size} bytes)`,
            // The code: the reason phrases are each side's own (README).
            status: raw.slice(9, 12),
            http: got[side]!.splice(0),
            fastcgi: seen,
          });
        }
      }
    }
    deepStrictEqual(rows.gateway, rows.nginx);
    // Each answer was chosen before it was sent: every kept file is closed.
    deepStrictEqual(await openTempFiles(both.gateway.prefix), []);
    // A client gone mid-body to a location that honours X-Accel-Redirect,
    // on the same gateway (nginx's side shows nothing a client can see).
    const gone: [string, string][] = [
      ["/acc/p", "Content-Length: 100000"],
      ["/acc/p", "Transfer-Encoding: chunked"],
    ];
    for (const [path, head] of gone) {
      const conn = await Deno.connect({
        hostname: "127.0.0.1",
        port: both.gateway.port,
      });
      const part = head.startsWith("Content")
        ? "b".repeat(50_000)
        : `${(100_000).toString(16)}\r\n${"b".repeat(50_000)}`;
      await writeText(
        conn,
        `POST ${path} HTTP/1.1\r\nHost: t\r\n${head}\r\n\r\n${part}`,
      );
      conn.close();
    }
    // Each request's access line is written once its answer (to a client
    // gone) is over: its file was closed before. One line a request.
    const lines = REQUESTS.length * FRAMINGS.length + gone.length;
    await waitFor(
      () => logLines(both.gateway.prefix, "access.log").length === lines,
    );
    deepStrictEqual(await openTempFiles(both.gateway.prefix), []);
    deepStrictEqual(got.gateway, []);
  },
);

/**
 * The temporary files of a prefix this process holds open: `/proc` names
 * an open file that was removed `… (deleted)`. Read by `ls`, since Deno
 * lets only an `--allow-all` process read `/proc/self/fd`.
 */
async function openTempFiles(prefix: string): Promise<string[]> {
  const out = await new Deno.Command("ls", {
    args: ["-l", `/proc/${Deno.pid}/fd`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(`${prefix}/temp/`));
}

/**
 * An upstream that records each request whole (Deno.serve gives a GET no
 * body, and a redirected request is a GET that may carry one), answering
 * an `X-Accel-Redirect` for the paths of {@linkcode ACCEL} (but to the
 * named location's request) and 200 elsewhere.
 */
function recording(into: Received[]): RawUpstream {
  return startRawUpstream(async (conn) => {
    const read = await readRequest(conn);
    if (read === null) return;
    const { head, body } = read;
    const [method, target] = head.split(" ");
    into.push({
      via: "http",
      method: method!,
      target: target!,
      length: /\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? "(none)",
      chunked: /\r\ntransfer-encoding: *([^\r]*)/i.exec(head)?.[1] ?? "(none)",
      // A long body by its size (a failed comparison stays readable).
      body: body.length > 64 ? `${body.length} bytes` : body,
    });
    // The named location sends the client's URI again: no redirect then.
    const accel = /\r\nx-named: 1/i.test(head) ? undefined : ACCEL[target!];
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\n${
        accel === undefined ? "" : `X-Accel-Redirect: ${accel}\r\n`
      }Content-Length: 4\r\nConnection: close\r\n\r\npage`,
    );
  });
}
