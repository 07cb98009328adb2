/**
 * Server-side includes beside nginx 1.22: one nginx.conf run by nginx and
 * by the gateway, a table of SSI documents served from files and through a
 * proxied location (a real upstream answering the same documents). Per
 * request: the status, every field the client sees (`Date`, `Server` and
 * `Connection` aside; `ETag` and `Last-Modified` by presence and weakness,
 * as their values name each side's own files), the body with chunked
 * framing and gzip undone, and the `[error]` lines written (the text of a
 * regex that does not compile aside).
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { maskErrorLine, startUpstream, waitFor } from "../_utils.ts";
import { type Read, request as exchange } from "../response/_raw_exchange.ts";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { PAGES } from "./_ssi_pages.ts";

const NEEDS = suiteNeeds("ssi/ssi_nginx_test.ts", ["nginx"]);

/** Folders of the root each served page is in (as their locations ask). */
const FOLDERS = [
  "",
  "silent/",
  "lm/",
  "txt/",
  "off/",
  "val/",
  "iff/",
  "gz/",
  "any/",
  "gzs/",
];

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log logs/access.log;
  types { text/html html; text/plain txt; }
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    root html;
    ssi on;
    location /p/ { proxy_pass http://127.0.0.1:${upstream}/; }
    location /np/ { proxy_pass http://127.0.0.1:${upstream}; }
    location /pl/ { proxy_pass http://127.0.0.1:${upstream}/; ssi_last_modified on; }
    location /silent/ { ssi_silent_errors on; }
    location /lm/ { ssi_last_modified on; }
    location /txt/ { ssi_types text/plain; }
    location /off/ { ssi off; }
    location /val/ { ssi_value_length 8; }
    location /iff/ { ssi off; if ($arg_s) { ssi on; } }
    location /gz/ { gzip on; gzip_min_length 1; }
    location = /ret/stub { return 204; }
    location /ret/ { default_type text/html; return 200 'r <!--# echo var="uri" --> <!--# echo var="request_method" -->'; }
    location /any/ { ssi_types *; default_type application/x-thing; }
    location /gzs/ { gzip_static on; }
    location /reti/ { default_type text/html; return 200 '[<!--# include virtual="/plain.html" -->][<!--# include virtual="/gzs/plain.html" -->]'; }
    location /ep/ { error_page 404 /echo.html; }
    location /int/ { error_page 404 = /p/echo.html; }
  }
}
`;
}

/** The upstream's answer: the page, with validators to be cleared. */
function upstreamAnswer(target: string): Response {
  const name = target.replace(/^\/(np\/)?/, "").replace(/\?.*$/, "");
  if (name === "encoded.html") {
    // An encoded answer is parsed as it is (nginx does not decode it).
    return new Response(new Uint8Array(gzipSync(PAGES["echo.html"]!)), {
      headers: { "content-type": "text/html", "content-encoding": "gzip" },
    });
  }
  const page = PAGES[name];
  if (page === undefined) return new Response("missing", { status: 404 });
  return new Response(page, {
    headers: {
      "content-type": name.endsWith(".txt") ? "text/plain" : "text/html",
      etag: '"up-1"',
      "last-modified": "Thu, 01 Jan 2026 00:00:00 GMT",
      "accept-ranges": "bytes",
    },
  });
}

/** The request heads, in order: the pages everywhere, then the rest. */
function requests(): string[] {
  const get = (path: string, extra = "") =>
    `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-T: <t&"v">${extra}`;
  const head = (path: string) => `HEAD ${path} HTTP/1.1\r\nHost: localhost`;
  const out: string[] = [];
  for (const name of Object.keys(PAGES)) {
    out.push(get(`/${name}?q=one`), get(`/p/${name}`));
  }
  out.push(
    get("/if.html?q=two"),
    get("/if.html?q=three"),
    get("/silent/errors.html"),
    get("/lm/plain.html"),
    get("/pl/plain.html"),
    get("/txt/page.txt"),
    get("/p/page.txt"),
    get("/off/echo.html"),
    get("/val/set.html"),
    get("/empty.html"),
    get("/missing.html"),
    get("/plain.html", "\r\nRange: bytes=0-3"),
    get("/plain.html", "\r\nIf-None-Match: *"),
    get("/p/plain.html", "\r\nIf-None-Match: *"),
    get("/ret/x", "\r\nIf-None-Match: *"),
    get("/ret/x", '\r\nIf-None-Match: "a"'),
    get("/ret/x", '\r\nIf-Match: "a"'),
    get("/ret/x", "\r\nIf-Match: *"),
    get("/ret/x", "\r\nIf-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT"),
    get("/ret/x", "\r\nIf-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT"),
    get("/echo.html", "\r\nIf-None-Match: *"),
    get("/echo.html", '\r\nIf-Match: "a"'),
    get("/echo.html", "\r\nIf-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT"),
    get("/echo.html", "\r\nIf-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT"),
    get("/lm/echo.html", "\r\nIf-None-Match: *"),
    get("/lm/echo.html", '\r\nIf-Match: "a"'),
    get(
      "/lm/echo.html",
      "\r\nIf-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT",
    ),
    get(
      "/lm/echo.html",
      "\r\nIf-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT",
    ),
    get("/p/echo.html", "\r\nIf-None-Match: *"),
    get("/p/echo.html", '\r\nIf-Match: "a"'),
    get("/pl/echo.html", "\r\nIf-None-Match: *"),
    get(
      "/pl/echo.html",
      "\r\nIf-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT",
    ),
    get("/off/echo.html", '\r\nIf-Match: "a"'),
    get(
      "/off/echo.html",
      "\r\nIf-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT",
    ),
    get(
      "/off/echo.html",
      "\r\nIf-Unmodified-Since: Thu, 01 Jan 2099 00:00:00 GMT",
    ),
    get(
      "/off/echo.html",
      '\r\nIf-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT\r\nIf-None-Match: "a"',
    ),
    head("/ret/x") + '\r\nIf-Match: "a"',
    head("/ret/x") + "\r\nIf-None-Match: *",
    get("/p/encoded.html"),
    get("/iff/echo.html"),
    get("/iff/echo.html?s=1"),
    get("/gz/echo.html", "\r\nAccept-Encoding: gzip"),
    // An include is a subrequest: the client's validators, range and
    // encoding are the page's, not the included file's.
    get("/reti/", "\r\nIf-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT"),
    get("/reti/", "\r\nRange: bytes=0-3"),
    get("/reti/", "\r\nAccept-Encoding: gzip"),
    get("/p/missing.html"),
    get("/ret/x"),
    head("/ret/x"),
    get("/any/page.noext"),
    get("/ep/missing"),
    get("/int/missing"),
    "GET /echo.html HTTP/1.0\r\nHost: localhost",
    head("/echo.html"),
    head("/p/echo.html"),
  );
  return out;
}

/**
 * What is compared of an answer (status code, fields, body with framing
 * and gzip undone): `ETag` and `Last-Modified` name each side's own files,
 * so only their presence and weakness count, and the built-in pages name
 * their product (README, error-page), which changes their length.
 */
function seen(read: Read): unknown {
  const builtIn = read.body.includes("<hr><center>");
  return {
    status: read.status,
    fields: read.fields.map((f) =>
      f.replace(/^(etag: (?:W\/)?)".*"$/, '$1"TAG"').replace(
        /^last-modified: .*/,
        "last-modified: TIME",
      ).replace(/^content-length: .*/, (l) => builtIn ? "content-length: N" : l)
    ),
    body: read.body.replaceAll(/<hr><center>[^<]*<\/center>/g, "<hr><center>"),
  };
}

/**
 * The `[error]` lines, masked: each side's prefix, and the words of a regex
 * that does not compile (JavaScript's, not PCRE2's: README, ssi).
 */
function errors(prefix: string): string[] {
  return logLines(prefix, "error.log").filter((l) => l.includes("[error]"))
    .map((l) =>
      maskErrorLine(l).replaceAll(prefix, "PREFIX").replace(
        /pcre2?_compile\(\) failed: .* in "/,
        'REGEX failed in "',
      )
    );
}

/**
 * Lines in order of their requests, in any order within one: nginx runs
 * a page's includes after it has parsed the page (postponed subrequests),
 * the gateway each in its turn (README, ssi).
 */
function perRequest(lines: string[]): string[][] {
  const groups: string[][] = [];
  let last = "";
  for (const line of lines) {
    const request = /, request: "[^"]*"/.exec(line)?.[0] ?? "";
    if (request !== last || groups.length === 0) groups.push([]);
    last = request;
    groups.at(-1)!.push(line);
  }
  return groups.map((g) => g.sort());
}

/** Each side's documents, in each folder. */
function prepare(prefix: string): void {
  for (const folder of FOLDERS) {
    const dir = join(prefix, "html", folder);
    Deno.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(PAGES)) {
      Deno.writeTextFileSync(join(dir, name), text);
    }
    Deno.writeTextFileSync(
      join(dir, "page.txt"),
      'text <!--# echo var="uri" --> end',
    );
    Deno.writeTextFileSync(join(dir, "empty.html"), "");
    Deno.writeFileSync(
      join(dir, "plain.html.gz"),
      new Uint8Array(gzipSync("gzipped plain")),
    );
    Deno.mkdirSync(join(dir, "dir"), { recursive: true });
    Deno.writeTextFileSync(join(dir, "page.noext"), '<!--# echo var="uri" -->');
  }
}
bothSidesAhead(prepare);

Deno.test(
  "SSI documents from files and from an upstream: answers and error lines as nginx 1.22",
  NEEDS,
  async () => {
    await using up = startUpstream((req) => upstreamAnswer(req.target));
    await using both = await bothSides((port) => conf(port, up.port), {
      prepare,
    });
    const { nginx: theirs, gateway: ours } = both;
    const asked = requests();
    for (const head of asked) {
      const nginxSaw = seen(await exchange(theirs.port, head));
      const gatewaySaw = seen(await exchange(ours.port, head));
      deepStrictEqual(gatewaySaw, nginxSaw, head.split("\r\n")[0]);
    }
    for (const side of [theirs, ours]) {
      await waitFor(() =>
        logLines(side.prefix, "access.log").length === asked.length
      );
    }
    deepStrictEqual(
      perRequest(errors(ours.prefix)),
      perRequest(errors(theirs.prefix)),
    );
  },
);
