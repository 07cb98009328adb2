/**
 * The `subrequest:` and `upstream:` fields of an SSI include's error
 * lines, beside nginx 1.22 on the same nginx.conf: a line names the
 * innermost subrequest that wrote it (a nested include's own URI, not its
 * parent include's), and the upstream of that subrequest alone
 * (ngx_http_log_error_handler reads the current request's `r->upstream`):
 * a main request's upstream kept through its `X-Accel-Redirect` is not
 * written on an include's line, and an include's own pass names its own.
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
  bothSidesAhead,
  logLines,
  PROCESS,
  sideUpstreams,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("ssi/ssi_lines_nginx_test.ts", ["nginx"]);

/** The pages: an include of a missing file, one nested, one proxied. */
const PAGES: Record<string, string> = {
  "i.html": 'I<!--# include virtual="/static/nope" -->i',
  "o.html": 'O<!--# include virtual="/sst/i.html" -->o',
  "d.html": 'D<!--# include virtual="/down/x" -->d',
  "od.html": 'E<!--# include virtual="/sst/d.html" -->e',
  "p.html": 'P<!--# include virtual="/acc/page" -->p',
};

function conf(
  port: number,
  up: { http: number; refused: number },
): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    location /sst/ { ssi on; alias html/static/; }
    location /static/ { }
    location /acc/ { proxy_pass http://127.0.0.1:${up.http}; }
    location /down/ { proxy_pass http://127.0.0.1:${up.refused}; }
  }
}
`;
}

/**
 * Each side's pages, written when the file loads: a root written just
 * before its first request waits for the gateway's settle proof.
 */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/static`, { recursive: true });
  for (const [name, text] of Object.entries(PAGES)) {
    Deno.writeTextFileSync(`${prefix}/html/static/${name}`, text);
  }
}
bothSidesAhead(prepare);

/** Each page asked directly and through an upstream's X-Accel-Redirect. */
const PATHS = Object.keys(PAGES).flatMap((page) => [
  `/sst/${page}`,
  `/acc/${page}`,
]);

Deno.test(
  "an SSI include's error lines name its own URI and its own upstream, nested or after the main request's X-Accel-Redirect, as nginx 1.22",
  NEEDS,
  async () => {
    await using upstreams = sideUpstreams(() => accelerating());
    const refused = refusedPort();
    await using both = await bothSides(
      (port, side) => conf(port, { http: upstreams[side].http.port, refused }),
      { prepare },
    );
    const seen: Record<string, Record<string, unknown>> = {
      nginx: {},
      gateway: {},
    };
    for (const path of PATHS) {
      for (const side of ["nginx", "gateway"] as const) {
        const { port, prefix } = both[side];
        const before = {
          errors: logLines(prefix, "error.log").length,
          access: logLines(prefix, "access.log").length,
        };
        const raw = await rawRequest(
          port,
          `GET ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
        );
        // The request's error lines are written by its access line.
        await waitFor(
          () => logLines(prefix, "access.log").length > before.access,
          5000,
        );
        const ports = new RegExp(`:${upstreams[side].http.port}\\b`, "g");
        seen[side]![`GET ${path}`] = {
          status: raw.slice(9, 12),
          errors: logLines(prefix, "error.log").slice(before.errors)
            .filter((l) => !l.includes("[notice]"))
            .map((l) =>
              maskErrorLine(l).replace(ports, ":UP").replaceAll(
                prefix,
                "PREFIX",
              )
            ),
        };
      }
    }
    deepStrictEqual(seen.gateway, seen.nginx);
  },
);

/**
 * An upstream whose `/acc/<page>.html` answers an `X-Accel-Redirect` to
 * `/sst/<page>.html`, and `/acc/page` a small page.
 */
function accelerating(): RawUpstream {
  return startRawUpstream(async (conn) => {
    const text = await readHead(conn);
    if (text === null) return;
    const target = text.split(" ")[1]!;
    const page = target.endsWith(".html")
      ? `X-Accel-Redirect: /sst/${target.slice("/acc/".length)}\r\n`
      : "";
    await writeText(
      conn,
      `HTTP/1.1 200 OK\r\n${page}Content-Length: 4\r\nConnection: close\r\n\r\npage`,
    );
  });
}
