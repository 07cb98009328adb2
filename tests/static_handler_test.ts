/** The client app at /: files, index, 404, and never outside the root. */
import { match, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { isSafeSegment } from "../src/static_handler.ts";
import { rawRequest, refusedPort, startGateway } from "./_utils.ts";

/** nginx's line for a missing file: open() on Linux, CreateFile() on Windows. */
function MISSING(dir: string): string {
  const esc = (t: string) => t.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
  return Deno.build.os === "windows"
    ? `CreateFile\\(\\) "${
      esc(join(dir, "html", "favicon.ico"))
    }" failed \\(2: The system cannot find the file specified\\)`
    : `open\\(\\) "${
      esc(`${dir}/html/favicon.ico`)
    }" failed \\(2: No such file or directory\\)`;
}

async function makeRoot(): Promise<string> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/html/assets`, { recursive: true });
  await Deno.writeTextFile(`${dir}/html/index.html`, "<h1>station app</h1>");
  await Deno.writeTextFile(`${dir}/html/assets/app.js`, "console.log(1)");
  await Deno.writeTextFile(`${dir}/html/.env`, "SECRET=1");
  await Deno.writeTextFile(`${dir}/secret.txt`, "outside the root");
  return dir;
}

Deno.test("serveStatic() serves files with types, index.html and validators", async () => {
  const dir = await makeRoot();
  try {
    await using gw = startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root: `${dir}/html`,
    });
    const index = await fetch(`${gw.url}/`);
    strictEqual(await index.text(), "<h1>station app</h1>");
    strictEqual(index.headers.get("content-type"), "text/html; charset=utf-8");
    const js = await fetch(`${gw.url}/assets/app.js`);
    strictEqual(await js.text(), "console.log(1)");
    strictEqual(
      js.headers.get("content-type"),
      "text/javascript; charset=utf-8",
    );
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
    strictEqual(dir301.headers.get("location"), "/assets/");
    const post = await fetch(`${gw.url}/index.html`, {
      method: "POST",
      body: "x",
    });
    await post.body?.cancel();
    strictEqual(post.status, 405);
    strictEqual(post.headers.get("allow"), "GET, HEAD");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serveStatic() answers 404 and logs nginx's open() line for a missing file", async () => {
  const dir = await makeRoot();
  try {
    await using gw = startGateway({
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

Deno.test("serveStatic() never serves outside the root, whatever the encoding", async (t) => {
  const dir = await makeRoot();
  try {
    await using gw = startGateway({
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

Deno.test("serveStatic() shows the embedded default page when the root is missing", async () => {
  await using gw = startGateway({
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

Deno.test("isSafeSegment() refuses names that mean something else on Windows", async (t) => {
  const cases: [string, "windows" | "linux", boolean][] = [
    ["app.js", "windows", true],
    ["PROGRA~1", "windows", false],
    ["a~1.js", "linux", true],
    ["index.html::$DATA", "linux", false],
    ["C:", "windows", false],
    ["x.", "windows", false],
    ["x ", "linux", false],
    ["a\\b", "linux", false],
    ["a\u0000b", "linux", false],
    [".git", "linux", false],
    ["a|b", "windows", false],
    ["con", "windows", false],
    ["NUL.txt", "windows", false],
    ["com1.js", "windows", false],
    ["lpt9", "windows", false],
    ["console.js", "windows", true],
    ["con", "linux", true],
  ];
  for (const [segment, family, expected] of cases) {
    await t.step(`${JSON.stringify(segment)} on ${family}`, () => {
      strictEqual(isSafeSegment(segment, family), expected);
    });
  }
});
