/** nginx's `error_page`: the gateway's own errors answered with a root file. */
import {
  deepStrictEqual,
  match,
  strictEqual,
  throws,
} from "node:assert/strict";
import { join } from "node:path";
import { parseCliArgs } from "../../src/config/cli.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { parseErrorPages } from "../../src/config/error_pages.ts";
import {
  rawRequest,
  refusedPort,
  startGateway,
  startUpstream,
  waitFor,
} from "../_utils.ts";
import { settledRoot } from "../_settled.ts";
import { openInsideRoot } from "../../src/static/containment.ts";
import { STOCK_50X } from "../_stock_pages.ts";

const CHROME =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

function request(method: string, path: string, extra = ""): string {
  return `${method} ${path} HTTP/1.1\r\nHost: localhost:8081\r\n${extra}` +
    `${
      method === "POST" ? "Content-Length: 2\r\n" : ""
    }Connection: close\r\n\r\n` +
    `${method === "POST" ? "{}" : ""}`;
}

function split(raw: string): { head: string; body: string } {
  const at = raw.indexOf("\r\n\r\n");
  return { head: raw.slice(0, at).toLowerCase(), body: raw.slice(at + 4) };
}

/** A folder with `html/` holding `files`; the folder is removed by the caller. */
function writeRoot(files: Record<string, string>): string {
  const dir = Deno.makeTempDirSync();
  Deno.mkdirSync(join(dir, "html"));
  for (const [name, text] of Object.entries(files)) {
    Deno.writeTextFileSync(join(dir, "html", name), text);
  }
  return dir;
}

/**
 * The tests' roots, written when the file loads (in a shard, long before
 * its tests run), by their files: an error page cannot wait for a folder
 * that changed a moment ago, and the folders settle within about a second
 * (README, **settle**). The ones no test took are removed at unload.
 */
const READY = new Map<string, string[]>();
for (
  const files of [
    { "50x.html": STOCK_50X },
    {},
    { "50x.html": STOCK_50X },
    { "50x.html": STOCK_50X },
    { "404.html": "<p>no such page</p>" },
    {},
  ]
) {
  const key = JSON.stringify(files);
  READY.set(key, [...READY.get(key) ?? [], writeRoot(files)]);
}
globalThis.addEventListener("unload", () => {
  for (const dir of [...READY.values()].flat()) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Removed already.
    }
  }
});

async function withRoot(
  files: Record<string, string>,
  run: (root: string) => Promise<void>,
): Promise<void> {
  const dir = READY.get(JSON.stringify(files))?.shift() ?? writeRoot(files);
  try {
    const root = join(dir, "html");
    // An error page cannot wait for a folder that changed a moment ago.
    await settledRoot(root, ...Object.keys(files));
    await run(root);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("error_page: a refused upstream gets the root's 50x.html with status 502, as the stock nginx.conf", async () => {
  await withRoot({ "50x.html": STOCK_50X }, async (root) => {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root,
    });
    const post = split(
      await rawRequest(gw.port, request("POST", "/api/loginms")),
    );
    match(post.head, /^http\/1\.1 502 bad gateway\r\n/);
    strictEqual(post.body, STOCK_50X);
    match(post.head, /\r\ncontent-length: 497\r\n/);
    match(post.head, /\r\netag: "[0-9a-f]+-1f1"/);
    match(post.head, /\r\ncontent-type: text\/html/);
    // Last-Modified and Accept-Ranges are for 200 only (nginx's header and
    // range filters); conditional and range headers are ignored.
    strictEqual(
      /last-modified|accept-ranges|cache-control/.test(post.head),
      false,
    );
    const conditional = split(
      await rawRequest(
        gw.port,
        request("GET", "/api/x", "If-None-Match: *\r\nRange: bytes=0-3\r\n"),
      ),
    );
    match(conditional.head, /^http\/1\.1 502 /);
    strictEqual(conditional.body, STOCK_50X);
    // Not padded for Chrome, unlike the built-in page.
    const chrome = split(
      await rawRequest(
        gw.port,
        request("GET", "/api/x", `User-Agent: ${CHROME}\r\n`),
      ),
    );
    strictEqual(chrome.body, STOCK_50X);
    const head = split(
      await rawRequest(gw.port, request("HEAD", "/api/loginms")),
    );
    match(head.head, /^http\/1\.1 502 /);
    match(head.head, /\r\ncontent-length: 497\r\n/);
    strictEqual(head.body, "");
    await waitFor(() => gw.accessLines.length === 4);
    deepStrictEqual(
      gw.accessLines.map((l) => l.replace(/\[[^\]]+\]/, "[T]")),
      [
        `127.0.0.1 - - [T] "POST /api/loginms HTTP/1.1" 502 497 "-" "-"`,
        `127.0.0.1 - - [T] "GET /api/x HTTP/1.1" 502 497 "-" "-"`,
        `127.0.0.1 - - [T] "GET /api/x HTTP/1.1" 502 497 "-" "${CHROME}"`,
        `127.0.0.1 - - [T] "HEAD /api/loginms HTTP/1.1" 502 0 "-" "-"`,
      ],
    );
    // The error log is unchanged: one connect() line per request.
    strictEqual(gw.errorLines.filter((l) => l.includes("[error]")).length, 4);
  });
});

Deno.test("error_page: without the file, or when off, the built-in page stays", async () => {
  await withRoot({}, async (root) => {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root,
    });
    const res = split(await rawRequest(gw.port, request("GET", "/api/x")));
    match(res.head, /^http\/1\.1 502 /);
    match(res.body, /<center><h1>502 Bad Gateway<\/h1><\/center>/);
    // nginx logs open() of the missing page and answers 404; see the
    // compat test's named difference.
    strictEqual(gw.errorLines.filter((l) => l.includes("50x.html")).length, 0);
  });
  await withRoot({ "50x.html": STOCK_50X }, async (root) => {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root,
      errorPages: parseErrorPages(["off"]),
    });
    const res = split(await rawRequest(gw.port, request("GET", "/api/x")));
    match(res.body, /<center><h1>502 Bad Gateway<\/h1><\/center>/);
  });
});

Deno.test("error_page: an upstream's own 502 passes through (proxy_intercept_errors off)", async () => {
  await withRoot({ "50x.html": STOCK_50X }, async (root) => {
    await using up = startUpstream(() =>
      new Response("upstream says no", { status: 502 })
    );
    await using gw = await startGateway({ upstreamUrl: up.origin, root });
    const res = split(await rawRequest(gw.port, request("GET", "/api/x")));
    match(res.head, /^http\/1\.1 502 /);
    strictEqual(res.body, "upstream says no");
  });
});

Deno.test("error_page: other statuses and pages can be configured; the status is kept", async () => {
  await withRoot({ "404.html": "<p>no such page</p>" }, async (root) => {
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root,
      spaFallback: false,
      errorPages: parseErrorPages(["404 /404.html"]),
    });
    const res = split(await rawRequest(gw.port, request("GET", "/nope.js")));
    match(res.head, /^http\/1\.1 404 not found\r\n/);
    strictEqual(res.body, "<p>no such page</p>");
    // The missing file is still logged, as nginx does.
    await waitFor(() => gw.errorLines.length === 1);
    match(gw.errorLines[0]!, /nope\.js" failed/);
    // 502 is not in this set: built-in.
    const api = split(await rawRequest(gw.port, request("GET", "/api/x")));
    match(api.body, /502 Bad Gateway/);
  });
});

Deno.test("error_page: a page that is a link out of the root is not served", {
  ignore: Deno.build.os === "windows", // symlinks need a privilege there
}, async () => {
  await withRoot({}, async (root) => {
    await Deno.writeTextFile(join(root, "..", "secret"), "outside the root");
    await Deno.symlink(join(root, "..", "secret"), join(root, "50x.html"));
    // The link changed the root a moment ago, and an error page cannot wait
    // for it: until the root is still again the built-in page answers
    // whatever the link is. A file written after the link proves the root
    // settled, and the link then stands refused for being outside.
    await Deno.writeTextFile(join(root, "after.html"), "x");
    await settledRoot(root, "after.html");
    strictEqual(
      openInsideRoot(root, join(root, "50x.html")).kind,
      "outside",
    );
    await using gw = await startGateway({
      upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
      root,
    });
    const res = split(await rawRequest(gw.port, request("GET", "/api/x")));
    match(res.head, /^http\/1\.1 502 /);
    strictEqual(res.body.includes("outside"), false);
    // The page's refusal is logged, after the upstream's failure.
    match(
      gw.errorLines.at(-1)!,
      /\[error\] .* open\(\) ".*\/50x\.html" failed \(40: Too many levels of symbolic links\)/,
    );
  });
});

Deno.test("parseErrorPages() reads nginx's error_page lines and refuses others", async (t) => {
  const good: [string[], [number, string][]][] = [
    [["500 502 503 504 /50x.html"], [
      [500, "/50x.html"],
      [502, "/50x.html"],
      [503, "/50x.html"],
      [504, "/50x.html"],
    ]],
    [["404 /errors/404.html", "404 /other.html"], [[404, "/other.html"]]],
    [["off"], []],
    [["  502   /a.html "], [[502, "/a.html"]]],
  ];
  for (const [lines, want] of good) {
    await t.step(JSON.stringify(lines), () => {
      deepStrictEqual([...parseErrorPages(lines)], want);
    });
  }
  const bad = [
    "/50x.html",
    "502",
    "502 50x.html",
    "302 /50x.html",
    "600 /50x.html",
    "502 =200 /50x.html",
    "502 http://example.com/",
    "502 /../secret",
    "502 /.env",
    "502 /api/error",
    "502 /a b.html",
    "50x /50x.html",
    "502 /dir/",
  ];
  for (const line of bad) {
    await t.step(JSON.stringify(line), () => {
      throws(() => parseErrorPages([line]), /Cannot parse error-page/);
    });
  }
});

Deno.test("--error-page and the errorPage key reach the configuration", () => {
  const base = "/opt/gw";
  deepStrictEqual(
    [...resolveConfig({}, {}, base).errorPages.keys()],
    [500, 502, 503, 504],
  );
  const cli = parseCliArgs([
    "--error-page",
    "502 /down.html",
    "--error-page",
    "404 /404.html",
  ]);
  deepStrictEqual(
    [...resolveConfig({}, cli.settings, base).errorPages],
    [[502, "/down.html"], [404, "/404.html"]],
  );
  strictEqual(
    resolveConfig({ errorPage: "off" }, {}, base).errorPages.size,
    0,
  );
});
