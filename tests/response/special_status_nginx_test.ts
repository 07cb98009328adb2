/**
 * Statuses with no body, no page or no response at all, beside nginx 1.22
 * on the same nginx.conf, from every source that makes one: `return`,
 * `try_files … =code`, `error_page … =code` to a file, to a named location
 * and after `proxy_intercept_errors`, `limit_req_status`, an SSI include of
 * such a location, and an upstream that sends a body with 204, 205 or 304.
 * Each row compares what the client read (nothing at all, or the status,
 * its framing, its type and its body), the access line and the error
 * lines. nginx sends no body with 204 and 304 (ngx_http_header_filter), an
 * empty one for a status it has no page for, its 400 pages for 495-497
 * (ngx_http_special_response_handler), and nothing for 408, 444 and 499
 * (ngx_http_finalize_request terminates the request). The gateway is held
 * to nginx's row, changed only where the README names a known difference
 * ({@linkcode gatewayRow}).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  startRawUpstream,
  waitFor,
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

const NEEDS = suiteNeeds("response/special_status_nginx_test.ts", [
  "nginx",
]);

/** What `return`, `try_files` and `error_page` are asked to answer. */
const CODES = [
  204,
  205,
  304,
  408,
  444,
  499,
  407,
  418,
  422,
  431,
  451,
  495,
  496,
  497,
  506,
  520,
  599,
];

/** What `limit_req_status` takes (400-599). */
const LIMIT_CODES = [444, 408, 499, 418, 451, 495, 599];

/** What the SSI includes ask for. */
const SSI_CODES = [204, 205, 304, 444, 418];

function conf(port: number, upstream: number): string {
  const each = (codes: number[], f: (code: number) => string) =>
    codes.map(f).join("\n");
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  log_format st '$request_uri $status $body_bytes_sent';
  access_log logs/access.log st;
  limit_req_zone $uri zone=z:1m rate=1r/m;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    server_tokens off;
    root html;
${each(CODES, (c) => `    location = /r${c} { return ${c}; }`)}
    location = /t205 { return 205 "txt"; }
    location = /t204 { return 204 "txt"; }
    location = /t304 { return 304 "txt"; }
${each(CODES, (c) => `    location /tf${c}/ { try_files /nope =${c}; }`)}
${
    each(CODES, (c) =>
      `    location /ep${c}/ { error_page 404 =${c} /page.html; }`)
  }
${each(CODES, (c) => `    location /en${c}/ { error_page 404 =${c} @named; }`)}
${
    each(CODES, (c) =>
      `    location /pi${c}/ { proxy_pass http://127.0.0.1:${upstream}/missing; proxy_intercept_errors on; error_page 404 =${c} /page.html; }`)
  }
${
    each(LIMIT_CODES, (c) =>
      `    location /lr${c}/ { limit_req zone=z nodelay; limit_req_status ${c}; }`)
  }
    location /ssi/ { ssi on; }
    location /up/ { proxy_pass http://127.0.0.1:${upstream}; }
    location @named { return 200 "named\\n"; }
  }
}
`;
}

/** Each side's files: the error page, the SSI pages, the rate-limited files. */
function prepare(prefix: string): void {
  Deno.mkdirSync(`${prefix}/html/ssi`, { recursive: true });
  Deno.writeTextFileSync(`${prefix}/html/page.html`, "the page\n");
  for (const c of SSI_CODES) {
    Deno.writeTextFileSync(
      `${prefix}/html/ssi/${c}.html`,
      `A<!--# include virtual="/r${c}" -->B`,
    );
  }
  for (const c of LIMIT_CODES) {
    Deno.mkdirSync(`${prefix}/html/lr${c}`);
    Deno.writeTextFileSync(`${prefix}/html/lr${c}/a.txt`, "limited\n");
  }
}
bothSidesAhead(prepare);

/**
 * An upstream answering `/up/NNN` with status NNN and a 6-byte body, and
 * anything else with a 404 (for `proxy_intercept_errors`).
 */
function upstream() {
  return startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    const code = /^GET \/up\/(\d{3}) /.exec(head ?? "")?.[1];
    await writeText(
      conn,
      code === undefined
        ? "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope"
        : `HTTP/1.1 ${code} X\r\nContent-Length: 6\r\nConnection: close\r\n\r\nbody6\n`,
    );
  });
}

/** The request URIs, in order (a `limit_req` row is its second request). */
const URIS = [
  ...CODES.map((c) => `/r${c}`),
  "/t205",
  "/t204",
  "/t304",
  ...CODES.map((c) => `/tf${c}/x`),
  ...CODES.map((c) => `/ep${c}/missing`),
  ...CODES.map((c) => `/en${c}/missing`),
  ...CODES.map((c) => `/pi${c}/x`),
  ...LIMIT_CODES.map((c) => `/lr${c}/a.txt`),
  ...SSI_CODES.map((c) => `/ssi/${c}.html`),
  "/up/204",
  "/up/205",
  "/up/304",
];

/** An error line without what differs by side: its prefix, the upstream's port. */
function masked(line: string): string {
  return maskErrorLine(line).replace(/same-conf-nginx-[0-9a-f]+/g, "PREFIX")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT");
}

/** One row as a side answered it. */
interface Row {
  read: Record<string, unknown>;
  access: string[];
  errors: string[];
}

/** The row of `/t204` pipelined behind `/r444` on one connection. */
const PIPELINED = "/r444, /t204 behind it";

/** What a client read, framing and footers made comparable. */
function seenBytes(raw: string): Record<string, unknown> {
  if (raw === "") return { sent: "nothing" };
  const end = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, end < 0 ? raw.length : end);
  const field = (name: string) =>
    new RegExp(`\r\n${name}: *([^\r]*)`, "i").exec(head)?.[1] ?? null;
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  let body = end < 0 ? "" : raw.slice(end + 4);
  const length = field("content-length");
  const chunked = field("transfer-encoding") === "chunked";
  let framing = length !== null ? "length" : chunked ? "chunked" : "close";
  if (chunked) {
    // Undo the chunks; a body cut before its last chunk says so.
    let out = "";
    let at = 0;
    let complete = false;
    for (let i = 0; i < 1000 && at < body.length; i++) {
      const lineEnd = body.indexOf("\r\n", at);
      if (lineEnd < 0) break;
      const size = parseInt(body.slice(at, lineEnd), 16);
      if (size === 0) {
        complete = true;
        break;
      }
      out += body.slice(lineEnd + 2, lineEnd + 2 + size);
      at = lineEnd + 2 + size + 2;
    }
    if (!complete) framing = "chunked, cut";
    body = out;
  } else if (length !== null && Number(length) !== body.length) {
    framing = `length ${length}, ${body.length} read`;
  }
  // RFC 9112 §6.3: a 204 and a 304 end with their head, whatever it says.
  if (status === 204 || status === 304) framing = "head only";
  return {
    status,
    framing,
    type: field("content-type"),
    // The footers differ by design (README error-page).
    body: body.replace(
      "<hr><center>nginx</center>",
      "<hr><center>station-gateway</center>",
    ),
  };
}

Deno.test(
  "statuses with no body, no page or no response answer as nginx 1.22 does, from return, try_files, error_page, limit_req_status, SSI and an upstream; nothing pipelined behind a 444 is served",
  NEEDS,
  async () => {
    await using ups = {
      nginx: upstream(),
      gateway: upstream(),
      async [Symbol.asyncDispose]() {
        await this.nginx[Symbol.asyncDispose]();
        await this.gateway[Symbol.asyncDispose]();
      },
    };
    await using both = await bothSides(
      (port, side) => conf(port, ups[side].port),
      { prepare },
    );
    const seen: Record<string, Record<string, Row>> = {
      nginx: {},
      gateway: {},
    };
    for (const side of ["nginx", "gateway"] as const) {
      const { port, prefix } = both[side];
      const ask = (uri: string) =>
        rawRequest(
          port,
          `GET ${uri} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
        );
      for (const c of LIMIT_CODES) await ask(`/lr${c}/a.txt`);
      await waitFor(
        () => logLines(prefix, "access.log").length === LIMIT_CODES.length,
        5000,
      );
      for (const uri of URIS) {
        const access = logLines(prefix, "access.log").length;
        const errors = logLines(prefix, "error.log").length;
        const raw = await ask(uri);
        await waitFor(
          () => logLines(prefix, "access.log").length > access,
          5000,
        );
        // The pages' footers differ by design: a page's line is held to
        // the body its own client read (`$body_bytes_sent`).
        const end = raw.indexOf("\r\n\r\n");
        const wire = end < 0 ? 0 : raw.length - end - 4;
        const page = raw.includes("<hr><center>");
        seen[side]![uri] = {
          read: seenBytes(raw),
          access: logLines(prefix, "access.log").slice(access).map((line) =>
            line.replace(
              / (\d+)$/,
              (all, n) => page && Number(n) === wire ? " (the page read)" : all,
            )
          ),
          errors: logLines(prefix, "error.log").slice(errors).map(masked),
        };
      }
      // A request pipelined behind a close is never read.
      const access = logLines(prefix, "access.log").length;
      const errors = logLines(prefix, "error.log").length;
      const raw = await rawRequest(
        port,
        "GET /r444 HTTP/1.1\r\nHost: t\r\n\r\nGET /t204 HTTP/1.1\r\nHost: t\r\n\r\n",
      );
      await waitFor(
        () => logLines(prefix, "access.log").length > access,
        5000,
      );
      seen[side]![PIPELINED] = {
        read: seenBytes(raw),
        access: logLines(prefix, "access.log").slice(access),
        errors: logLines(prefix, "error.log").slice(errors).map(masked),
      };
    }
    const expected = Object.fromEntries(
      Object.entries(seen.nginx!).map(([uri, row]) => [
        uri,
        gatewayRow(uri, row as Row),
      ]),
    );
    deepStrictEqual(seen.gateway, expected);
  },
);

/**
 * nginx's row as the gateway answers it, by the README's known
 * differences:
 * - **close-head**: where nginx closes without a byte (408, 444, 499),
 *   `Deno.serve` writes a head first: the client reads the status and a
 *   chunked body cut before any chunk, then the close; logged as nginx.
 * - **reset-content**: a 205 goes without the body nginx sends with it
 *   (`Response` refuses one; `Deno.serve` writes no length for a 205),
 *   logged `205 0`.
 * - **try-files-2xx**: `try_files … =205` (a 2xx other than 201 and 204)
 *   is answered; nginx finalizes the request with it unanswered, logs
 *   `000` and keeps the connection (here `Connection: close` closed it).
 * - **ssi-include-close**: an SSI include of a location that closes
 *   without an answer includes nothing; nginx ends the whole request.
 */
function gatewayRow(uri: string, row: Row): Row {
  const status = Number(row.access[0]?.split(" ")[1]);
  if (uri.startsWith("/ssi/") && status === 444) {
    return {
      ...row,
      read: { status: 200, framing: "chunked", type: "text/html", body: "AB" },
      access: [`${uri} 200 17`],
    };
  }
  if (uri.startsWith("/tf") && status === 0) {
    return {
      ...row,
      read: { status: 205, framing: "close", type: null, body: "" },
      access: [`${uri} 205 0`],
    };
  }
  if (row.read.sent === "nothing") {
    return {
      ...row,
      read: { status, framing: "chunked, cut", type: null, body: "" },
    };
  }
  if (row.read.status === 205) {
    return {
      ...row,
      read: { ...row.read, framing: "close", body: "" },
      access: [`${uri} 205 0`],
    };
  }
  return row;
}
