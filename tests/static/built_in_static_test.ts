/**
 * The client app at / under the built-in configuration (the flags' static
 * location, served by the engine): files, index, the app's routes, the
 * `Cache-Control` policy, 404, and never outside the root.
 */
import { match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest, refusedPort, startGateway } from "../_utils.ts";

/** nginx's line for a missing file: open() on Linux, CreateFile() on Windows. */
// nginx joins the root and $uri as they are: on Windows a root with
// backslashes is followed by "/favicon.ico" ("C:\nginx/html/…").
function MISSING(dir: string): string {
  const esc = (t: string) => t.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
  return Deno.build.os === "windows"
    ? `CreateFile\\(\\) "${
      esc(`${dir}/html/favicon.ico`)
    }" failed \\(2: The system cannot find the file specified\\)`
    : `open\\(\\) "${
      esc(`${dir}/html/favicon.ico`)
    }" failed \\(2: No such file or directory\\)`;
}

function writeRoot(): string {
  const dir = Deno.makeTempDirSync();
  Deno.mkdirSync(`${dir}/html/assets`, { recursive: true });
  Deno.writeTextFileSync(`${dir}/html/index.html`, "<h1>station app</h1>");
  Deno.writeTextFileSync(`${dir}/html/assets/app.js`, "console.log(1)");
  Deno.writeTextFileSync(`${dir}/html/.env`, "SECRET=1");
  Deno.writeTextFileSync(`${dir}/secret.txt`, "outside the root");
  return dir;
}

function writeApp(): string {
  const dir = Deno.makeTempDirSync();
  const html = join(dir, "html");
  Deno.mkdirSync(join(html, "assets"), { recursive: true });
  Deno.writeTextFileSync(join(html, "index.html"), "<h1>the app</h1>");
  Deno.writeTextFileSync(
    join(html, "assets", "index-BQ3x9f2a.js"),
    "x".repeat(1000),
  );
  Deno.writeTextFileSync(
    join(html, "assets", "index-BQ3x9f2a.js.br"),
    "BR-BYTES",
  );
  Deno.writeTextFileSync(
    join(html, "assets", "index-BQ3x9f2a.js.gz"),
    "GZIP-BYTES!",
  );
  Deno.writeTextFileSync(join(html, "data.txt"), "0123456789");
  return dir;
}

/** The byte-for-byte test's files, over a write buffer each. */
const BYTES: Record<string, Uint8Array> = {
  // Over a write buffer, so the shared body stream is really exercised.
  "ascii.js": new TextEncoder().encode("let a = 'x';\n".repeat(9000)),
  "utf8.js": new TextEncoder().encode("const t = '日本語 ü';\n".repeat(4000)),
  "blob.bin": Uint8Array.from({ length: 70000 }, (_, i) => (i * 7) & 0xff),
};

/** A station root with the byte-for-byte test's files. */
function writeBytes(): string {
  const dir = writeRoot();
  for (const [name, data] of Object.entries(BYTES)) {
    Deno.writeFileSync(`${dir}/html/${name}`, data);
  }
  return dir;
}

/** The app with a link out of the root and one inside it. */
function writeLinked(): string {
  const dir = writeApp();
  Deno.writeTextFileSync(join(dir, "secret.txt"), "outside the root");
  Deno.symlinkSync(join(dir, "secret.txt"), join(dir, "html", "link.txt"));
  Deno.symlinkSync(
    join(dir, "html", "data.txt"),
    join(dir, "html", "inside.txt"),
  );
  return dir;
}

/** The caching test's files and the `Cache-Control` each gets. */
const LONG = "public, max-age=31536000, immutable";
const CACHING: [string, string][] = [
  ["index.html", "no-cache"],
  ["deep/page.htm", "no-cache"],
  ["assets/index-BQ3x9f2a.js", LONG],
  ["assets/app.3f9a2c1b.css", LONG],
  ["chunk-5FZ2WJ7K.mjs", LONG],
  ["main.js", "no-cache"],
  ["jquery-ui.css", "no-cache"],
  ["vendor-abcdefgh.js", "no-cache"],
  ["logo.png", "no-cache"],
];

/** An `html/` of the caching test's files, each holding its own name. */
function writeCaching(): string {
  const dir = Deno.makeTempDirSync();
  for (const [name] of CACHING) {
    Deno.mkdirSync(join(dir, "html", name, ".."), { recursive: true });
    Deno.writeTextFileSync(join(dir, "html", name), name);
  }
  return dir;
}

/**
 * Folders written when the file is loaded, one for each test that takes
 * one (3 of the station root, 6 of the app, and the byte-for-byte, link
 * and caching tests' own): a client-app folder written a moment ago is
 * served only once it has settled (README, settle: about a second where
 * the settled path check is the witness, as under the gate's permissions),
 * so the file waits for that once, not once a test. What a test writes
 * into its folder still waits, as it should. A test removes the folder it
 * took; the ones no test took (a filtered run) are removed when the
 * process ends.
 */
const READY = {
  root: Array.from({ length: 3 }, writeRoot),
  app: Array.from({ length: 6 }, writeApp),
  bytes: [writeBytes()],
  // Links need a privilege on Windows, where that test is ignored.
  linked: Deno.build.os === "windows" ? [] : [writeLinked()],
  caching: [writeCaching()],
};
globalThis.addEventListener("unload", () => {
  for (const dir of Object.values(READY).flat()) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // removed already
    }
  }
});

/** A station root with `secret.txt` beside it; a fresh one once none is left. */
function makeRoot(): Promise<string> {
  return Promise.resolve(READY.root.pop() ?? writeRoot());
}

Deno.test("the built-in static location serves files with types, index.html and validators", async () => {
  const dir = await makeRoot();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: `${dir}/html`,
    });
    const index = await fetch(`${gw.url}/`);
    strictEqual(await index.text(), "<h1>station app</h1>");
    // No charset unless configured, as nginx: a GBK app keeps its own.
    strictEqual(index.headers.get("content-type"), "text/html");
    const js = await fetch(`${gw.url}/assets/app.js`);
    strictEqual(await js.text(), "console.log(1)");
    strictEqual(js.headers.get("content-type"), "text/javascript");
    const etag = js.headers.get("etag")!;
    match(etag, /^"[0-9a-f]+-e"$/);
    const again = await fetch(`${gw.url}/assets/app.js`, {
      headers: { "if-none-match": etag },
    });
    await again.body?.cancel();
    strictEqual(again.status, 304);
    const head = await fetch(`${gw.url}/index.html`, { method: "HEAD" });
    strictEqual(head.headers.get("content-length"), "20");
    await head.body?.cancel();
    const dir301 = await fetch(`${gw.url}/assets`, { redirect: "manual" });
    await dir301.body?.cancel();
    strictEqual(dir301.status, 301);
    // nginx's absolute_redirect: the Host and the port.
    strictEqual(dir301.headers.get("location"), `${gw.url}/assets/`);
    const post = await fetch(`${gw.url}/index.html`, {
      method: "POST",
      body: "x",
    });
    await post.body?.cancel();
    strictEqual(post.status, 405);
    // nginx's 405 names no Allow field.
    strictEqual(post.headers.get("allow"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location answers 404 and logs nginx's open() line for a missing file", async () => {
  const dir = await makeRoot();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: `${dir}/html`,
    });
    const res = await fetch(`${gw.url}/favicon.ico`, {
      headers: { referer: `${gw.url}/` },
    });
    await res.body?.cancel();
    strictEqual(res.status, 404);
    strictEqual(gw.errorLines.length, 1);
    match(
      gw.errorLines[0]!,
      new RegExp(
        `\\[error\\] \\d+#\\d+: \\*\\d+ ${
          MISSING(dir)
        }, client: 127\\.0\\.0\\.1, server: localhost, request: "GET /favicon\\.ico HTTP/1\\.1", host: "127\\.0\\.0\\.1:${gw.port}", referrer: "${gw.url}/"$`,
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location never serves outside the root, whatever the encoding", async (t) => {
  const dir = await makeRoot();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: `${dir}/html`,
    });
    const attempts = [
      "/../secret.txt",
      "/%2e%2e/secret.txt",
      "/%2E%2E/%2e%2e/etc/passwd",
      "/assets/..%2f..%2fsecret.txt",
      "/assets/%2e%2e%5c%2e%2e%5csecret.txt",
      "/..\\secret.txt",
      "/assets\\..\\..\\secret.txt",
      "/%5c..%5csecret.txt",
      "/.env",
      "/%2eenv",
      "/index.html%00.js",
      "/C:/Windows/win.ini",
      "/index.html::$DATA",
      "/index.html.",
      "/index.html%20",
      "/%252e%252e/secret.txt",
    ];
    for (const target of attempts) {
      await t.step(target, async () => {
        const res = await rawRequest(
          gw.port,
          `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        );
        strictEqual(/outside the root|SECRET|root:x:0/.test(res), false, res);
        match(res, /^HTTP\/1\.1 (400|404) /);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location shows the embedded default page when the root is missing", async () => {
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
    root: "/nonexistent/station/html",
  });
  const res = await fetch(`${gw.url}/`);
  const html = await res.text();
  strictEqual(res.status, 200);
  match(html, /station-gateway/);
  match(html, /forwards\s+every request under <code>\/api\/<\/code>/);
  match(
    html,
    /does not answer: connect\(\) failed \((111: Connection refused|10061: No connection could be made because the target machine actively refused it)\)/,
  );
  const other = await fetch(`${gw.url}/app.js`);
  await other.body?.cancel();
  strictEqual(other.status, 404);
});

/** The app with sidecars and `data.txt`; a fresh one once none is left. */
function makeApp(): Promise<string> {
  return Promise.resolve(READY.app.pop() ?? writeApp());
}

Deno.test("the built-in static location answers app routes with index.html and missing assets with 404", async () => {
  const dir = await makeApp();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: join(dir, "html"),
    });
    const deep = await fetch(`${gw.url}/orders/42`);
    strictEqual(deep.status, 200);
    strictEqual(await deep.text(), "<h1>the app</h1>");
    strictEqual(deep.headers.get("cache-control"), "no-cache");
    const nav = await fetch(`${gw.url}/report.v2`, {
      headers: { accept: "text/html,application/xhtml+xml" },
    });
    strictEqual(await nav.text(), "<h1>the app</h1>");
    const asset = await fetch(`${gw.url}/assets/missing.js`);
    await asset.body?.cancel();
    strictEqual(asset.status, 404);
    strictEqual(gw.errorLines.length, 1, "only the missing asset is logged");
    match(gw.errorLines[0]!, /missing\.js" failed \(2: /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location can switch the SPA fallback and missing-file lines off", async () => {
  const dir = await makeApp();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: join(dir, "html"),
      spaFallback: false,
      logNotFound: false,
    });
    const deep = await fetch(`${gw.url}/orders/42`);
    await deep.body?.cancel();
    strictEqual(deep.status, 404);
    const head = await fetch(`${gw.url}/nope.js`, { method: "HEAD" });
    strictEqual(head.status, 404);
    strictEqual(await head.text(), "");
    strictEqual(gw.errorLines.length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location answers single ranges with 206, 416 and If-Range", async () => {
  const dir = await makeApp();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: join(dir, "html"),
    });
    const part = await fetch(`${gw.url}/data.txt`, {
      headers: { range: "bytes=2-5" },
    });
    strictEqual(part.status, 206);
    strictEqual(await part.text(), "2345");
    strictEqual(part.headers.get("content-range"), "bytes 2-5/10");
    strictEqual(part.headers.get("content-length"), "4");
    // nginx's range filter sends Accept-Ranges on a 200 only.
    strictEqual(part.headers.get("accept-ranges"), null);
    const tail = await fetch(`${gw.url}/data.txt`, {
      headers: { range: "bytes=-3" },
    });
    strictEqual(await tail.text(), "789");
    const over = await fetch(`${gw.url}/data.txt`, {
      headers: { range: "bytes=10-" },
    });
    await over.body?.cancel();
    strictEqual(over.status, 416);
    strictEqual(over.headers.get("content-range"), "bytes */10");
    const stale = await fetch(`${gw.url}/data.txt`, {
      headers: { range: "bytes=2-5", "if-range": '"old-etag"' },
    });
    strictEqual(stale.status, 200);
    strictEqual(await stale.text(), "0123456789");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location serves precompressed sidecars with Vary and long caching for fingerprints", async () => {
  const dir = await makeApp();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: join(dir, "html"),
    });
    const get = async (ae: string | null) => {
      const raw = await rawRequest(
        gw.port,
        `GET /assets/index-BQ3x9f2a.js HTTP/1.1\r\nHost: localhost\r\n${
          ae === null ? "" : `Accept-Encoding: ${ae}\r\n`
        }Connection: close\r\n\r\n`,
      );
      return {
        head: raw.split("\r\n\r\n")[0]!,
        body: raw.split("\r\n\r\n")[1]!,
      };
    };
    // gzip_static on, gzip_vary on: the .gz for a client that takes gzip,
    // with Vary; nginx has no .br counterpart in its own modules.
    const gz = await get("gzip, deflate, br");
    match(gz.head, /content-encoding: gzip/i);
    match(gz.head, /content-type: text\/javascript/i);
    match(gz.head, /vary: Accept-Encoding/i);
    match(gz.head, /cache-control: public, max-age=31536000, immutable/i);
    strictEqual(gz.body, "GZIP-BYTES!");
    const plain = await get(null);
    strictEqual(/content-encoding/i.test(plain.head), false);
    // gzip_vary: the answer varies by Accept-Encoding whoever asks.
    match(plain.head, /vary: Accept-Encoding/i);
    strictEqual(plain.body, "x".repeat(1000));
    // Each representation has its own ETag, so caches never mix them.
    const tag = (h: string) => h.match(/etag: ("[^"]+")/i)![1];
    strictEqual(new Set([tag(gz.head), tag(plain.head)]).size, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "the built-in static location refuses a symlink that leaves the root",
  {
    ignore: Deno.build.os === "windows",
  },
  async () => {
    const dir = READY.linked.pop() ?? writeLinked();
    try {
      await using gw = await startGateway({
        upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
        root: join(dir, "html"),
      });
      const out = await fetch(`${gw.url}/link.txt`);
      strictEqual(out.status, 403);
      strictEqual((await out.text()).includes("outside"), false);
      const inside = await fetch(`${gw.url}/inside.txt`);
      strictEqual(await inside.text(), "0123456789");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("the built-in static location picks up a redeployed file from the next millisecond (nothing held open)", async () => {
  const dir = await makeApp();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: join(dir, "html"),
    });
    strictEqual(await (await fetch(`${gw.url}/data.txt`)).text(), "0123456789");
    // Replace by rename, as deploy tools do.
    await Deno.writeTextFile(join(dir, "html", "data.txt.new"), "new version");
    await Deno.rename(
      join(dir, "html", "data.txt.new"),
      join(dir, "html", "data.txt"),
    );
    // A stat is shared by the requests of one millisecond (StaticCache.stat).
    await new Promise((r) => setTimeout(r, 2));
    strictEqual(
      await (await fetch(`${gw.url}/data.txt`)).text(),
      "new version",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location sends ASCII, UTF-8 and binary files byte for byte, whole and in ranges", async () => {
  const dir = READY.bytes.pop() ?? writeBytes();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: `${dir}/html`,
    });
    for (const [name, data] of Object.entries(BYTES)) {
      for (let round = 0; round < 2; round++) { // a miss, then a cache hit
        const res = await fetch(`${gw.url}/${name}`);
        const got = new Uint8Array(await res.arrayBuffer());
        strictEqual(res.headers.get("content-length"), String(data.length));
        strictEqual(got.length, data.length, name);
        strictEqual(
          got.every((b, i) => b === data[i]),
          true,
          `${name} differs`,
        );
      }
      const part = await fetch(`${gw.url}/${name}`, {
        headers: { range: "bytes=100-199" },
      });
      const slice = new Uint8Array(await part.arrayBuffer());
      strictEqual(part.status, 206);
      strictEqual(slice.every((b, i) => b === data[100 + i]), true, name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location tells app routes from missing assets", async (t) => {
  const dir = await makeApp();
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: join(dir, "html"),
    });
    // [path, Accept, answered with the app's index.html]
    const cases: [string, string | null, boolean][] = [
      ["/orders/42", "*/*", true],
      ["/settings", null, true],
      ["/", null, true],
      ["/assets/app.js", "*/*", false],
      ["/favicon.ico", "image/avif,image/webp,*/*", false],
      [
        "/report.v2",
        "text/html,application/xhtml+xml,application/xml;q=0.9",
        true,
      ],
      ["/missing.css", "text/css,*/*;q=0.1", false],
    ];
    for (const [path, accept, app] of cases) {
      await t.step(`${path} (${accept})`, async () => {
        const res = await fetch(`${gw.url}${path}`, {
          headers: accept === null ? {} : { accept },
        });
        const body = await res.text();
        strictEqual(res.status, app ? 200 : 404);
        strictEqual(body === "<h1>the app</h1>", app);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the built-in static location revalidates HTML and caches fingerprinted assets long", async (t) => {
  const dir = READY.caching.pop() ?? writeCaching();
  const html = join(dir, "html");
  try {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: html,
    });
    for (const [name, expected] of CACHING) {
      await t.step(name, async () => {
        const res = await fetch(`${gw.url}/${name}`);
        strictEqual(await res.text(), name);
        strictEqual(res.headers.get("cache-control"), expected);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
