/**
 * `serveFile` beside a real nginx 1.22 on the same folder, location by
 * location, directive by directive: status, every header the client sees
 * (`Server`, `Date`, `Connection` aside; `Expires` as seconds after `Date`),
 * the body's bytes, and the error lines (time, pid#tid and *N masked).
 * Named differences: the error pages' footer (`station-gateway`, so their
 * length) and the reason phrases.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { gzipSync } from "node:zlib";
import type { LocationConf } from "../../src/engine/mod.ts";
import { htmlAhead, type HtmlFiles, startNginxSite } from "../_nginx.ts";
import {
  locationConf,
  STOCK_MIME_TYPES_PATH,
  stockMimeTypes,
  value,
} from "../_location_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { maskErrorLine } from "../_utils.ts";
import {
  type Exchange,
  exchange,
  type FileLocation,
  startFileServer,
} from "./_file_server.ts";

const ON_LINUX = suiteNeeds("serve_file_nginx_test.ts", ["nginx"]);

/** `<meta charset="gbk">` and 中文 in GBK. */
const GBK_PAGE = new Uint8Array([
  ...new TextEncoder().encode('<html><head><meta charset="gbk"></head><body>'),
  0xd6,
  0xd0,
  0xce,
  0xc4,
  ...new TextEncoder().encode("</body></html>\n"),
]);

const FILES: HtmlFiles = {
  "a.txt": "hello\n",
  ".env": "SECRET=1\n",
  ".hidden/x.txt": "h",
  "dir/index.html": "<p>dir</p>",
  "noidx/x.bin": "x",
  "app.js": "console.log('plain');\n",
  "app.js.gz": gzipSync("console.log('gzip');\n"),
  "gbk.html": GBK_PAGE,
  "LICENSE": "MIT\n",
  "UP.TXT": "UP",
  "sp ace.txt": "space",
  "中.txt": "zh",
  "big.bin": "b".repeat(300 * 1024),
  "中文/x.txt": "zh",
  "sp ace/x.txt": "sp",
  // Folders whose names nginx escapes in `Location`, or not.
  'q"x/f': "f",
  "x|y/f": "f",
  "x]y/f": "f",
  "x?y/f": "f",
  "x+y~z/f": "f",
  "e\x01f/f": "f",
  // A link loop: ELOOP, which nginx answers 403 with its line.
  loop1: { symlink: "$HTML/loop2" },
  loop2: { symlink: "$HTML/loop1" },
};

const GBK_FILES = { "gbk.html": GBK_PAGE };
htmlAhead([FILES, GBK_FILES]);

/** Locations: nginx's text and the same settings as a `LocationConf`. */
const LOCATIONS: {
  prefix: string;
  nginx: string;
  conf: Partial<LocationConf>;
  gzipVary?: boolean;
}[] = [
  { prefix: "/gz/", nginx: "gzip_static on;", conf: { gzipStatic: "on" } },
  {
    prefix: "/gzv/",
    nginx: "gzip_static on; gzip_vary on;",
    conf: { gzipStatic: "on" },
    gzipVary: true,
  },
  {
    prefix: "/gzav/",
    nginx: "gzip_static always; gzip_vary on;",
    conf: { gzipStatic: "always" },
    gzipVary: true,
  },
  {
    prefix: "/gza/",
    nginx: "gzip_static always;",
    conf: { gzipStatic: "always" },
  },
  { prefix: "/cs/", nginx: "charset utf-8;", conf: { charset: "utf-8" } },
  {
    prefix: "/tp/",
    nginx:
      'types { "text/html; foo=bar" html; "TEXT/PLAIN" txt; } charset utf-8;',
    conf: {
      types: new Map([["html", "text/html; foo=bar"], ["txt", "TEXT/PLAIN"]]),
      charset: "utf-8",
    },
  },
  {
    prefix: "/csall/",
    nginx: "charset koi8-r; charset_types *; gzip_static on;",
    conf: { charset: "koi8-r", charsetTypes: new Set(["*"]), gzipStatic: "on" },
  },
  {
    prefix: "/ex/",
    nginx:
      'expires 1h; add_header X-A "v$uri"; add_header X-B b always; add_header X-E "";',
    conf: {
      expires: { kind: "after", seconds: 3600, modified: false },
      addHeaders: [
        { name: "X-A", value: value("v$uri"), always: false },
        { name: "X-B", value: value("b"), always: true },
        { name: "X-E", value: value(""), always: false },
      ],
    },
  },
  {
    prefix: "/exe/",
    nginx: "expires epoch;",
    conf: { expires: { kind: "epoch" } },
  },
  {
    prefix: "/exm/",
    nginx: "expires max;",
    conf: { expires: { kind: "max" } },
  },
  {
    prefix: "/exn/",
    nginx: "expires -1;",
    conf: { expires: { kind: "after", seconds: -1, modified: false } },
  },
  {
    prefix: "/ex0/",
    nginx: "expires 0;",
    conf: { expires: { kind: "after", seconds: 0, modified: false } },
  },
  {
    prefix: "/exmod/",
    nginx: "expires modified +1h;",
    conf: { expires: { kind: "after", seconds: 3600, modified: true } },
  },
  {
    prefix: "/exd/",
    nginx: "expires @3h30m;",
    conf: { expires: { kind: "daily", secondsOfDay: 3 * 3600 + 30 * 60 } },
  },
  {
    prefix: "/cc/",
    nginx: 'add_header Cache-Control "no-store"; add_header Last-Modified "";',
    conf: {
      addHeaders: [
        { name: "Cache-Control", value: value("no-store"), always: false },
        { name: "Last-Modified", value: value(""), always: false },
      ],
    },
  },
  { prefix: "/noetag/", nginx: "etag off;", conf: { etag: false } },
  {
    prefix: "/nolog/",
    nginx: "log_not_found off;",
    conf: { logNotFound: false },
  },
];

function nginxServer(): string {
  return [
    "location / { root $HTML; }",
    ...LOCATIONS.map((l) =>
      `location ${l.prefix} { alias $HTML/; ${l.nginx} }`
    ),
  ].join("\n");
}

function gatewayLocations(html: string): FileLocation[] {
  const base = {
    types: stockMimeTypes(),
    defaultType: "application/octet-stream",
    root: value(html),
  };
  return [
    { prefix: "/", conf: locationConf(base), folder: { root: html } },
    ...LOCATIONS.map((l) => ({
      prefix: l.prefix,
      conf: locationConf({ ...base, ...l.conf }),
      folder: { alias: `${html}/` },
      ...(l.gzipVary ? { gzipVary: true } : {}),
    })),
  ];
}

const FOOTER = "<hr><center>nginx/1.22.1</center>";
const OUR_FOOTER = "<hr><center>station-gateway</center>";

/** What the client sees, with the named differences taken out. */
interface Seen {
  status: number;
  /** Fields as a client's `Headers` holds them: repeated names joined. */
  headers: [string, string][];
  body: string;
  /**
   * `Expires` in seconds after `Date`, when not a fixed date: compared to
   * within a second, as the gateway's `Date` is cached per second apart
   * from its clock.
   */
  expiresAfterDate?: number;
  /**
   * `Cache-Control`'s `max-age` beside such an `Expires`: the same span,
   * counted from each server's own clock (`expires @3h30m` gives 31424 s
   * from one second and 31423 s from the next), so compared alike.
   */
  maxAge?: number;
  /**
   * `Date` in whole seconds: the two answers to one request may be seconds
   * apart on a loaded machine, and a span counted from each server's clock
   * differs by as much.
   */
  date?: number;
}

function seen(r: Exchange, port: number): Seen {
  let body = new TextDecoder("latin1").decode(r.body);
  body = body.replace(FOOTER, OUR_FOOTER);
  const fields = new Headers();
  for (const [name, value] of r.headers) fields.append(name, value);
  // nginx's own pages: the footer's length differs (named difference).
  const builtIn = r.status >= 300 &&
    fields.get("content-type")?.startsWith("text/html") === true &&
    !fields.has("last-modified");
  for (const name of ["server", "date", "connection", "keep-alive"]) {
    fields.delete(name);
  }
  if (builtIn) fields.delete("content-length");
  const out: Seen = { status: r.status, headers: [], body };
  const expires = fields.get("expires");
  // `expires epoch` and `expires max` are fixed dates, compared as they are;
  // every other `Expires` is counted from the clock (one that falls on a
  // Thursday too: `expires @3h30m` on a Wednesday).
  const fixed = /^Thu, (01 Jan 1970 00:00:01|31 Dec 2037 23:55:55) GMT$/;
  if (expires !== null && !fixed.test(expires)) {
    const date = r.headers.find(([n]) => n === "date")?.[1] ?? "";
    out.expiresAfterDate = (Date.parse(expires) - Date.parse(date)) / 1000;
    out.date = Date.parse(date) / 1000;
    fields.delete("expires");
    const cacheControl = fields.get("cache-control");
    const maxAge = cacheControl?.match(/\bmax-age=(\d+)/)?.[1];
    if (cacheControl !== null && maxAge !== undefined) {
      out.maxAge = Number(maxAge);
      fields.set(
        "cache-control",
        cacheControl.replace(/\bmax-age=\d+/, "max-age=N"),
      );
    }
  }
  out.headers = [...fields].map((
    [n, v],
  ) => [n, v.replace(`:${port}/`, ":PORT/")]);
  return out;
}

/**
 * Equal, `Expires` and its `max-age` to within the seconds between the two
 * `Date`s plus one (the gateway's `Date` is cached per second, so it may
 * lag the clock `max-age` is counted from): a slow machine widens the
 * window only by the time that really passed, and a wrong `expires`
 * computation is still off by more.
 */
function same(
  a: Seen & { request: string },
  b: Seen & { request: string },
): boolean {
  const { expiresAfterDate: x, maxAge: xAge, date: dx, ...restA } = a;
  const { expiresAfterDate: y, maxAge: yAge, date: dy, ...restB } = b;
  if (JSON.stringify(restA) !== JSON.stringify(restB)) return false;
  const slack = 1 + Math.abs((dx ?? 0) - (dy ?? 0));
  const near = (m: number | undefined, n: number | undefined) =>
    m === undefined || n === undefined ? m === n : Math.abs(m - n) <= slack;
  return near(x, y) && near(xAge, yAge);
}

function errorsOf(lines: string[]): string[] {
  return lines.filter((l) => /\[(error|crit|alert|emerg)\]/.test(l)).map(
    maskErrorLine,
  );
}

const HOST = "Host: LocalHost:8081";

/** The requests: method, target, extra fields. */
function requests(html: string): string[] {
  const info = Deno.statSync(`${html}/a.txt`);
  const etag = `"${Math.floor(info.mtime!.getTime() / 1000).toString(16)}-${
    info.size.toString(16)
  }"`;
  const lastModified = info.mtime!.toUTCString();
  const get = (target: string, ...fields: string[]) =>
    [`GET ${target} HTTP/1.1`, HOST, ...fields].join("\r\n");
  const method = (m: string, target: string) =>
    [`${m} ${target} HTTP/1.1`, HOST, "Content-Length: 0"].join("\r\n");
  const out = [
    get("/a.txt"),
    get("/.env"),
    get("/.hidden/x.txt"),
    get("/dir"),
    get("/dir?x=1&y"),
    get("/dir/"),
    get("/noidx/"),
    get("/none/"),
    get("/nofile"),
    get("/a.txt/x"),
    get("/UP.TXT"),
    get("/LICENSE"),
    get("/gbk.html"),
    get("/big.bin"),
    get("/sp%20ace.txt"),
    get("/%E4%B8%AD.txt"),
    get("/%E4%B8%AD%E6%96%87"),
    get("/sp%20ace?q=%20"),
    get("/q%22x"),
    get("/x%7Cy"),
    get("/x%5Dy"),
    get("/x%3Fy"),
    get("/x+y~z"),
    get("/e%01f"),
    get("/loop1"),
    get("/a.txt", "Range: bytes=0-0"),
    get("/a.txt", "Range: bytes=2-"),
    get("/a.txt", "Range: bytes=99-"),
    get("/a.txt", `If-None-Match: ${etag}`),
    get("/a.txt", `If-Modified-Since: ${lastModified}`),
    get("/a.txt", `If-Range: ${etag}`, "Range: bytes=1-1"),
    `HEAD /a.txt HTTP/1.1\r\n${HOST}`,
    `HEAD /nofile HTTP/1.1\r\n${HOST}`,
    method("POST", "/a.txt"),
    method("POST", "/dir"),
    method("POST", "/nofile"),
    method("PUT", "/a.txt"),
    method("DELETE", "/nofile"),
    method("OPTIONS", "/a.txt"),
    `GET /dir HTTP/1.0`,
  ];
  for (const p of ["/gz/", "/gzv/", "/gza/", "/gzav/", "/csall/"]) {
    out.push(
      get(`${p}app.js`, "Accept-Encoding: gzip, deflate, br"),
      get(`${p}app.js`),
      get(`${p}app.js`, "Accept-Encoding: gzip;q=0"),
      get(`${p}app.js`, "Accept-Encoding: gzip", "Via: 1.1 proxy"),
      get(`${p}app.js`, "Accept-Encoding: gzip", "Range: bytes=0-3"),
      get(`${p}a.txt`, "Accept-Encoding: gzip"),
      `HEAD ${p}app.js HTTP/1.1\r\n${HOST}\r\nAccept-Encoding: gzip`,
      method("POST", `${p}app.js`),
    );
  }
  for (const p of ["/cs/", "/csall/", "/tp/"]) {
    out.push(
      get(`${p}a.txt`),
      get(`${p}app.js`),
      get(`${p}gbk.html`),
      get(`${p}LICENSE`),
      get(`${p}big.bin`),
      get(`${p}dir`),
    );
  }
  for (
    const p of [
      "/ex/",
      "/exe/",
      "/exm/",
      "/exn/",
      "/ex0/",
      "/exmod/",
      "/exd/",
      "/cc/",
    ]
  ) {
    out.push(
      get(`${p}a.txt`),
      get(`${p}nofile`),
      get(`${p}dir`),
      get(`${p}a.txt`, `If-None-Match: ${etag}`),
      get(`${p}a.txt`, "Range: bytes=0-1"),
      get(`${p}a.txt`, "Range: bytes=99-"),
      method("POST", `${p}a.txt`),
    );
  }
  out.push(
    get("/noetag/a.txt"),
    get("/noetag/a.txt", `If-None-Match: ${etag}`),
    get("/noetag/a.txt", "If-None-Match: *"),
    get("/noetag/a.txt", `If-Modified-Since: ${lastModified}`),
    get("/noetag/a.txt", `If-Range: ${etag}`, "Range: bytes=1-1"),
    get("/nolog/nofile"),
    get("/nolog/a.txt/x"),
    get("/nolog/none/"),
  );
  return out;
}

Deno.test({
  name:
    "serveFile() answers as nginx 1.22 for every static directive, side by side",
  ...ON_LINUX,
  async fn() {
    await using nginx = await startNginxSite({
      http: [
        `include ${STOCK_MIME_TYPES_PATH};`,
        "default_type application/octet-stream;",
      ],
      server: nginxServer(),
      files: FILES,
    });
    await using gateway = startFileServer(gatewayLocations(nginx.root));
    const list = requests(nginx.root);
    const theirs: (Seen & { request: string })[] = [];
    const ours: (Seen & { request: string })[] = [];
    for (const r of list) {
      theirs.push({
        request: r,
        ...seen(await exchange(nginx.port, r), nginx.port),
      });
      ours.push({
        request: r,
        ...seen(await exchange(gateway.port, r), gateway.port),
      });
    }
    // Only the differing answers, so a failure shows each of them.
    const differ = (_: unknown, i: number) => !same(ours[i]!, theirs[i]!);
    deepStrictEqual(ours.filter(differ), theirs.filter(differ));
    deepStrictEqual(
      errorsOf(gateway.errorLines),
      errorsOf(nginx.errorLines()),
    );
    // The cases the lines are about were really run.
    strictEqual(errorsOf(gateway.errorLines).length, 15);
  },
});

Deno.test({
  name:
    "serveFile() sends a GBK page as nginx does without charset: text/html, bytes untouched",
  ...ON_LINUX,
  async fn() {
    await using nginx = await startNginxSite({
      http: [`include ${STOCK_MIME_TYPES_PATH};`],
      server: "location / { root $HTML; }",
      files: GBK_FILES,
    });
    await using gateway = startFileServer(gatewayLocations(nginx.root));
    const request = "GET /gbk.html HTTP/1.1\r\nHost: localhost";
    for (const port of [nginx.port, gateway.port]) {
      const r = await exchange(port, request);
      strictEqual(r.status, 200);
      deepStrictEqual(
        r.headers.filter(([n]) =>
          n === "content-type" || n === "cache-control"
        ),
        [["content-type", "text/html"]],
      );
      deepStrictEqual(r.body, GBK_PAGE);
    }
  },
});
