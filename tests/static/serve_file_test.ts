/**
 * `serveFile` over real sockets where nginx cannot stand beside it: what
 * the gateway adds of its own (nothing), containment, Windows names,
 * files that cannot be read, and bodies streamed or cached.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { serveFile } from "../../src/static/mod.ts";
import {
  locationConf,
  requestVars,
  stockMimeTypes,
  value,
} from "../_location_conf.ts";
import { maskErrorLine } from "../_utils.ts";
import { exchange, startFileServer } from "./_file_server.ts";

/** Files below a site's `html` (`../x` lands beside it). */
type Files = Record<string, string | Uint8Array>;

/** A site's folder, `html` in it; disposing removes it. */
interface Site extends AsyncDisposable {
  dir: string;
  html: string;
}

function disposable(dir: string): Site {
  return {
    dir,
    html: `${dir}/html`,
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function site(files: Files): Promise<Site> {
  const dir = await Deno.makeTempDir({ prefix: "serve-file-" });
  const html = `${dir}/html`;
  for (const [name, data] of Object.entries(files)) {
    const path = `${html}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    if (typeof data === "string") await Deno.writeTextFile(path, data);
    else await Deno.writeFile(path, data);
  }
  return disposable(dir);
}

/** What a served site holds: its files, and links (from, to) below `dir`. */
interface SiteSpec {
  files: Files;
  links?: [string, string][];
}

function writeSite({ files, links = [] }: SiteSpec): string {
  const dir = Deno.makeTempDirSync({ prefix: "serve-file-" });
  for (const [name, data] of Object.entries(files)) {
    const path = `${dir}/html/${name}`;
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    if (typeof data === "string") Deno.writeTextFileSync(path, data);
    else Deno.writeFileSync(path, data);
  }
  for (const [from, to] of links) {
    Deno.symlinkSync(`${dir}/${to}`, `${dir}/${from}`);
  }
  return dir;
}

const BIG = new Uint8Array(600 * 1024).map((_, i) => i % 251);

/** The sites the tests serve as written. */
const SITES = {
  types: {
    files: {
      "index.html": "<p>x</p>",
      "app.js": "let a;",
      "app.js.gz": gzipSync("let a;"),
      "app.js.br": "brotli",
      ".env": "A=1",
    },
  },
  links: {
    files: { "in.txt": "in", "../secret.txt": "secret" },
    links: [["html/out.txt", "secret.txt"], [
      "html/link-in.txt",
      "html/in.txt",
    ]],
  },
  gzOutside: {
    files: { "app.js": "plain", "../app.js.gz": "outside" },
    links: [["html/app.js.gz", "app.js.gz"]],
  },
  windows: {
    // Files by those names here (Linux), so only the check can refuse them.
    files: {
      "index.html": "x",
      ".env": "A=1",
      "com1 .txt": "a serial port on Windows",
      "CONOUT$.log": "the console on Windows",
    },
  },
  big: { files: { "big.bin": BIG, "small.bin": BIG.slice(0, 1000) } },
} satisfies Record<string, SiteSpec>;

/**
 * The sites, written when the file is loaded: a folder written a moment
 * ago is served only once it has settled (README, settle: about a second
 * where the settled path check is the witness, as under the gate's
 * permissions), so the file waits for that once, not once a test. The ones
 * no test took (a filtered run) are removed when the process ends.
 */
const READY = new Map(
  Object.entries(SITES).map(([name, spec]) => [name, writeSite(spec)]),
);
globalThis.addEventListener("unload", () => {
  for (const dir of READY.values()) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // removed already
    }
  }
});

/** A site of {@linkcode SITES}, written at load; a fresh one once taken. */
function servedSite(name: keyof typeof SITES): Site {
  const dir = READY.get(name) ?? writeSite(SITES[name]);
  READY.delete(name);
  return disposable(dir);
}

const GET = (target: string, ...fields: string[]) =>
  [`GET ${target} HTTP/1.1`, "Host: localhost", ...fields].join("\r\n");

function field(headers: [string, string][], name: string): string | null {
  return headers.find(([n]) => n === name)?.[1] ?? null;
}

Deno.test("serveFile() adds nothing the location does not ask for: no Cache-Control, no charset, no .gz, no .br", async () => {
  await using s = servedSite("types");
  const conf = locationConf({ types: stockMimeTypes(), root: value(s.html) });
  const always = locationConf({ ...conf, gzipStatic: "always" });
  await using server = startFileServer([
    { prefix: "/", conf, folder: { root: s.html } },
    { prefix: "/always/", conf: always, folder: { alias: `${s.html}/` } },
  ]);
  const ae = "Accept-Encoding: br, gzip";
  for (
    const [target, type, encoding, body] of [
      ["/index.html", "text/html", null, "<p>x</p>"],
      ["/app.js", "application/javascript", null, "let a;"],
      ["/.env", "text/plain", null, "A=1"],
      ["/always/app.js", "application/javascript", "gzip", null],
    ] as const
  ) {
    const r = await exchange(server.port, GET(target, ae));
    strictEqual(r.status, 200, target);
    strictEqual(field(r.headers, "content-type"), type, target);
    strictEqual(field(r.headers, "cache-control"), null, target);
    strictEqual(field(r.headers, "vary"), null, target);
    strictEqual(field(r.headers, "content-encoding"), encoding, target);
    if (body !== null) strictEqual(new TextDecoder().decode(r.body), body);
  }
  deepStrictEqual(server.errorLines, []);
});

Deno.test("serveFile() refuses a link leaving the folder on the opened file: 403 and nginx's disable_symlinks line", async () => {
  await using s = servedSite("links");
  const conf = locationConf({ root: value(s.html) });
  for (const cache of [true, false]) {
    await using server = startFileServer(
      [{ prefix: "/", conf, folder: { root: s.html } }],
      { cache },
    );
    const out = await exchange(server.port, GET("/out.txt"));
    strictEqual(out.status, 403);
    strictEqual(new TextDecoder().decode(out.body).includes("secret"), false);
    const inside = await exchange(server.port, GET("/link-in.txt"));
    strictEqual(inside.status, 200);
    deepStrictEqual(server.errorLines.map(maskErrorLine), [
      `TIME [error] PID#TID: *N open() "${s.html}/out.txt" failed (40: Too many levels of symbolic links), client: 127.0.0.1, server: localhost, request: "GET /out.txt HTTP/1.1", host: "localhost"`,
    ]);
  }
});

Deno.test("serveFile() under gzip_static serves the file itself when its .gz leads outside the folder, with the .gz's line", async () => {
  await using s = servedSite("gzOutside");
  const conf = locationConf({ root: value(s.html), gzipStatic: "always" });
  await using server = startFileServer([
    { prefix: "/", conf, folder: { root: s.html } },
  ]);
  const r = await exchange(server.port, GET("/app.js"));
  strictEqual(r.status, 200);
  strictEqual(field(r.headers, "content-encoding"), null);
  strictEqual(new TextDecoder().decode(r.body), "plain");
  // ngx_http_gzip_static_handler logs every failure but ENOENT and
  // declines to the file itself.
  deepStrictEqual(server.errorLines.map(maskErrorLine), [
    `TIME [error] PID#TID: *N open() "${s.html}/app.js.gz" failed (40: Too many levels of symbolic links), client: 127.0.0.1, server: localhost, request: "GET /app.js HTTP/1.1", host: "localhost"`,
  ]);
});

Deno.test("serveFile() answers Windows' unsafe names as nginx for Windows: 404 and its CreateFile() line", async () => {
  await using s = servedSite("windows");
  const conf = locationConf({ root: value(s.html) });
  await using server = startFileServer(
    [{ prefix: "/", conf, folder: { root: s.html } }],
    { family: "windows" },
  );
  const refused = [
    "/index.html::$DATA",
    "/con",
    "/NUL.txt",
    "/com1 .txt",
    "/CONOUT$.log",
    "/PROGRA~1/x",
    "/index.html.",
  ];
  for (const target of refused) {
    const r = await exchange(server.port, GET(encodeURI(target)));
    strictEqual(r.status, 404, target);
  }
  strictEqual((await exchange(server.port, GET("/.env"))).status, 200);
  deepStrictEqual(
    server.errorLines.map((l) => maskErrorLine(l).replace(/, client.*/, "")),
    refused.map((t) =>
      `TIME [error] PID#TID: *N CreateFile() "${s.html}${t}" failed (2: The system cannot find the file specified)`
    ),
  );
});

Deno.test({
  name: "serveFile() answers a file it may not read with 403 and nginx's line",
  ignore: Deno.build.os === "windows" || Deno.uid() === 0,
  async fn() {
    await using s = await site({ "locked.txt": "x" });
    await Deno.chmod(`${s.html}/locked.txt`, 0o000);
    const conf = locationConf({ root: value(s.html) });
    await using server = startFileServer([
      { prefix: "/", conf, folder: { root: s.html } },
    ]);
    strictEqual((await exchange(server.port, GET("/locked.txt"))).status, 403);
    deepStrictEqual(
      server.errorLines.map((l) => maskErrorLine(l).replace(/, client.*/, "")),
      [
        `TIME [error] PID#TID: *N open() "${s.html}/locked.txt" failed (13: Permission denied)`,
      ],
    );
  },
});

Deno.test({
  name:
    "serveFile() answers what is not a regular file with 404 and nginx's crit line",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using s = await site({ "x.txt": "x" });
    const mkfifo = await new Deno.Command("mkfifo", {
      args: [`${s.html}/pipe`],
    }).output();
    strictEqual(mkfifo.success, true);
    const conf = locationConf({ root: value(s.html) });
    await using server = startFileServer([
      { prefix: "/", conf, folder: { root: s.html } },
    ]);
    strictEqual((await exchange(server.port, GET("/pipe"))).status, 404);
    deepStrictEqual(
      server.errorLines.map((l) => maskErrorLine(l).replace(/, client.*/, "")),
      [`TIME [crit] PID#TID: *N "${s.html}/pipe" is not a regular file`],
    );
  },
});

Deno.test("serveFile() sends a large file whole, in ranges and to HEAD, cached or streamed", async () => {
  const big = BIG;
  await using s = servedSite("big");
  const conf = locationConf({ root: value(s.html) });
  for (const cache of [true, false]) {
    await using server = startFileServer(
      [{ prefix: "/", conf, folder: { root: s.html } }],
      { cache },
    );
    for (const name of ["big.bin", "small.bin", "small.bin"]) {
      const whole = await exchange(server.port, GET(`/${name}`));
      const size = name === "big.bin" ? big.length : 1000;
      strictEqual(whole.status, 200);
      strictEqual(field(whole.headers, "content-length"), String(size));
      strictEqual(field(whole.headers, "accept-ranges"), "bytes");
      deepStrictEqual(whole.body, big.subarray(0, size));
      const part = await exchange(
        server.port,
        GET(`/${name}`, "Range: bytes=100-199"),
      );
      strictEqual(part.status, 206);
      strictEqual(field(part.headers, "accept-ranges"), null);
      deepStrictEqual(part.body, big.subarray(100, 200));
      const head = await exchange(
        server.port,
        `HEAD /${name} HTTP/1.1\r\nHost: localhost`,
      );
      strictEqual(head.status, 200);
      strictEqual(field(head.headers, "content-length"), String(size));
      strictEqual(head.body.length, 0);
    }
  }
});

Deno.test("serveFile() answers a URI ending in / as nginx's content phase without an index: 403 and its line", async () => {
  await using s = await site({ "dir/x.txt": "x" });
  const conf = locationConf({ root: value(s.html) });
  const vars = requestVars(new Request("http://localhost/dir/"), {
    serverPort: 80,
  });
  const result = serveFile(new Request("http://localhost/dir/"), {
    path: `${s.html}/dir/`,
    root: s.html,
    conf,
    uri: "/dir/",
    vars,
  });
  strictEqual(result.response.status, 403);
  deepStrictEqual(result.failure, {
    level: "error",
    message: `directory index of "${s.html}/dir/" is forbidden`,
  });
  await result.response.body?.cancel();
});
