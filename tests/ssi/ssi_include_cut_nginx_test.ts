/**
 * An SSI include whose upstream fails after its head (it closes before
 * its `Content-Length` or its last chunk), beside nginx 1.22: nginx
 * flushes what the include relayed, finalizes the subrequest as done
 * (`ngx_http_upstream_finalize_request`) and goes on with the page: the
 * rest of the page and a clean chunked end, one `[error]` line. The
 * include's `stub` is sent when it sent nothing; `set=` keeps what was
 * read.
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
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("ssi/ssi_include_cut_nginx_test.ts", ["nginx"]);

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    location /ssi/ { ssi on; root html; }
    location /api/ { proxy_pass http://127.0.0.1:${upstream}; }
  }
}
`;
}

/** What the upstream sends for each path, then it closes. */
const ANSWERS: Record<string, string> = {
  "/api/short": "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
  "/api/empty": "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
  "/api/chunk":
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
};

const STUB = '<!--# block name="st" -->STUB<!--# endblock -->';

/** Each page: its name and text. */
const PAGES: [string, string][] = [
  ["short", 'BEFORE<!--# include virtual="/api/short" -->AFTER'],
  ["chunk", 'BEFORE<!--# include virtual="/api/chunk" -->AFTER'],
  [
    "two",
    'A<!--# include virtual="/api/short" -->B<!--# include virtual="/api/chunk" -->C',
  ],
  [
    "stub-empty",
    `${STUB}BEFORE<!--# include virtual="/api/empty" stub="st" -->AFTER`,
  ],
  [
    "stub-short",
    `${STUB}BEFORE<!--# include virtual="/api/short" stub="st" -->AFTER`,
  ],
  [
    "set-short",
    'BEFORE<!--# include virtual="/api/short" set="v" -->[<!--# echo var="v" default="none" -->]AFTER',
  ],
  [
    "set-empty",
    'BEFORE<!--# include virtual="/api/empty" set="v" -->[<!--# echo var="v" default="none" -->]AFTER',
  ],
];

function prepare(prefix: string): void {
  Deno.mkdirSync(join(prefix, "html", "ssi"), { recursive: true });
  for (const [name, text] of PAGES) {
    Deno.writeTextFileSync(join(prefix, "html", "ssi", `${name}.html`), text);
  }
}
bothSidesAhead(prepare);

/** A chunked body undone, and whether its last chunk came. */
function dechunk(raw: string): { body: string; ended: boolean } {
  let rest = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  let body = "";
  // Bounded by the text: each turn takes a chunk off it.
  for (;;) {
    const eol = rest.indexOf("\r\n");
    if (eol < 0) return { body, ended: false };
    const size = parseInt(rest.slice(0, eol), 16);
    if (Number.isNaN(size)) return { body, ended: false };
    if (size === 0) return { body, ended: rest.slice(eol) === "\r\n\r\n" };
    body += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 4 + size);
  }
}

Deno.test({
  name:
    "an SSI include whose upstream closes before its body's end ends there and the page goes on, with nginx 1.22's line, stub and set= value",
  ...NEEDS,
  async fn() {
    await using up = startRawUpstream(async (conn) => {
      const head = await readHead(conn);
      const path = head?.split(" ")[1] ?? "";
      await writeText(conn, ANSWERS[path] ?? "HTTP/1.1 404 \r\n\r\n");
    });
    await using sides = await bothSides((port) => conf(port, up.port), {
      prepare,
    });
    const got: unknown[] = [];
    const want: unknown[] = [];
    for (const [name] of PAGES) {
      for (
        const [side, into] of [[sides.gateway, got], [
          sides.nginx,
          want,
        ]] as const
      ) {
        const before = logLines(side.prefix, "error.log").length;
        const raw = await rawRequest(
          side.port,
          `GET /ssi/${name}.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        );
        into.push([
          name,
          raw.slice(0, 12),
          dechunk(raw),
          logLines(side.prefix, "error.log").slice(before)
            .filter((l) => l.includes("[error]"))
            .map((l) =>
              maskErrorLine(l).replace(/127\.0\.0\.1:\d+/, "127.0.0.1:PORT")
            ),
        ]);
      }
    }
    deepStrictEqual(got, want);
  },
});
