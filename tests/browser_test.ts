/**
 * A real browser against the gateway: headless Chromium (Debian's package,
 * installed by scripts/install_test_deps.sh when missing) driven by
 * playwright-core in browser_driver/driver.ts. The test app at
 * tests/testdata/browser-app/ does what the station client does: it is
 * served from http://localhost:<port>/, POSTs to /api/loginms and
 * /api/Home31/UpDateTitle, then opens a WebSocket under /api/.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  freePort,
  maskErrorLine,
  readHead,
  refusedPort,
  startRawUpstream,
  waitFor,
  writeText,
} from "./_utils.ts";
import { startMain } from "./_in_process.ts";
import { suiteNeeds } from "./_prerequisites.ts";
import { makeCertificate } from "./_tls.ts";
import { htmlAhead, startNginxSite } from "./_nginx.ts";
import { STOCK_MIME_TYPES_PATH } from "./_location_conf.ts";
import { nginxPrefix, tempDir } from "./_prefix.ts";
import { DEFAULT_PAGE_REFRESH_SECONDS } from "../src/static/default_page.ts";

const APP = new URL("./testdata/browser-app/", import.meta.url).pathname;
const DRIVER = new URL("./browser_driver/driver.ts", import.meta.url).pathname;
// The driver has its own config and lock: playwright-core stays out of the
// project's deno.lock, which `deno task start` installs in full.
const DRIVER_CONFIG = new URL("./browser_driver/deno.json", import.meta.url)
  .pathname;
const CHROMIUM = "/usr/bin/chromium";
const ON_LINUX = suiteNeeds("browser_test.ts", ["chromium"]);

async function ensureChromium(): Promise<void> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    const script = new URL("../scripts/install_test_deps.sh", import.meta.url)
      .pathname;
    const out = await new Deno.Command("bash", { args: [script] }).output();
    if (!out.success) {
      throw new Error(
        `chromium is needed: ${new TextDecoder().decode(out.stderr)}`,
      );
    }
  }
}

interface PageReport {
  state?: string;
  laterState?: string;
  logFiles?: string;
  lastError?: string;
  login?: string;
  title?: string;
  ws?: string;
  lib?: string;
  route?: string;
  deepStatus?: number;
  statuses: Record<string, number[]>;
  encodings: Record<string, string | null>;
  url?: string;
  protocol?: string;
  texts?: { text: string; charset: string }[];
  picks?: string[];
  /** The refresh Chromium scheduled for the built-in page. */
  scheduled?: { delay: number; reason: string; url: string };
  /** The built-in page's own refreshes, as Chromium started them. */
  refreshes?: { reason: string; url: string }[];
}

/** The browser driver: one process and one Chromium for the whole suite. */
interface Driver extends AsyncDisposable {
  /**
   * Browses a scenario as a fresh browser would (nothing cached, no
   * cookies); `text` takes several pages. `default` answers once the
   * built-in page is shown and Chromium has scheduled its refresh; the
   * driver then waits for `refresh` (the upstream is up), which lets the
   * page refresh itself and answers the rest.
   */
  browse(
    scenario:
      | "live"
      | "refresh"
      | "down"
      | "assets"
      | "default"
      | "tls"
      | "text"
      | "subprotocol",
    ...bases: string[]
  ): Promise<PageReport>;
}

/**
 * Starts the browser driver (its own process: see browser_driver/driver.ts)
 * and Chromium once: a launch costs more than a page, and a browser context
 * with its first page about five times a page's load in a tab already open,
 * so the checks share one tab, its cache and cookies emptied before each
 * (as a new browser) and left on `about:blank` after.
 */
async function startDriver(): Promise<Driver> {
  await ensureChromium();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "-q", "--config", DRIVER_CONFIG, DRIVER],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  let pending = "";
  const nextLine = async (): Promise<string | null> => {
    for (let reads = 0; reads < 100_000; reads++) {
      const end = pending.indexOf("\n");
      if (end >= 0) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        return line;
      }
      const { value, done } = await lines.read();
      if (done) return null;
      pending += value;
    }
    return null;
  };
  return {
    async browse(scenario, ...bases) {
      await writer.write(
        new TextEncoder().encode(`${JSON.stringify([scenario, ...bases])}\n`),
      );
      const line = await nextLine();
      if (line === null) {
        throw new Error(`browser driver failed: ${await stderr}${pending}`);
      }
      const report = JSON.parse(line);
      if (report.error !== undefined) {
        throw new Error(`browser driver failed: ${report.error}`);
      }
      return report;
    },
    async [Symbol.asyncDispose]() {
      // stdin's end closes the browser and ends the driver.
      await writer.close().catch(() => {});
      await child.status;
      lines.releaseLock();
      await child.stdout.cancel().catch(() => {});
      await stderr;
    },
  };
}

/** The station's upstream: answers both endpoints and echoes on /hub. */
function startStationUpstream() {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/hub") {
        const { socket, response } = Deno.upgradeWebSocket(req);
        socket.onmessage = (e) => socket.send(`echo:${e.data}`);
        return response;
      }
      const body = await req.text();
      if (req.method === "POST" && path === "/loginms") {
        return new Response(`welcome ${JSON.parse(body).user}`);
      }
      if (req.method === "POST" && path === "/Home31/UpDateTitle") {
        return new Response(`title ${JSON.parse(body).title}`);
      }
      return new Response("not here", { status: 404 });
    },
  );
  return {
    port: server.addr.port,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

function gatewayArgs(upstreamPort: number, dir: string): string[] {
  return [
    "--listen",
    "0", // both loopbacks, as a station runs it: the browser uses localhost
    "--upstream",
    `http://127.0.0.1:${upstreamPort}`,
    "--root",
    APP,
    "--error-log",
    `${dir}/error.log`,
    "--access-log",
    `${dir}/access.log`,
  ];
}

/** A check of the suite: a step of the one test that owns the browser. */
interface Check {
  name: string;
  ignore: boolean;
  fn: (driver: Driver) => Promise<void>;
}

const CHECKS: Check[] = [];

function check(
  name: string,
  options: { ignore: boolean },
  fn: (driver: Driver) => Promise<void>,
): void {
  CHECKS.push({ name, ignore: options.ignore, fn });
}

check(
  "browser: the app talks to the upstream through /api/, WebSocket included",
  ON_LINUX,
  async (driver) => {
    await using tmp = await tempDir();
    const dir = tmp.path;
    await using up = startStationUpstream();
    await using gw = await startMain(gatewayArgs(up.port, dir));
    const page = await driver.browse("live", `http://localhost:${gw.port}`);
    strictEqual(page.login, "200 welcome demo");
    strictEqual(page.title, "200 title Station 7");
    strictEqual(page.ws, "echo:ping-from-browser");
    strictEqual(page.lib, "loaded from the precompressed file");
    strictEqual(await Deno.readTextFile(`${dir}/error.log`), "");
  },
);

check(
  "browser: a protocol the page did not offer is relayed as nginx relays it, and Chromium fails the connection itself",
  ON_LINUX,
  async (driver) => {
    await using tmp = await tempDir();
    const dir = tmp.path;
    // 101 with the protocol the path's last part names; anything else 404.
    await using up = startRawUpstream(async (conn) => {
      const head = await readHead(conn) ?? "";
      const key = /sec-websocket-key: *(\S+)/i.exec(head)?.[1];
      const pick = /^GET \/pick\/(\w+) /.exec(head)?.[1];
      if (key === undefined || pick === undefined) {
        await writeText(
          conn,
          "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        return;
      }
      const digest = await crypto.subtle.digest(
        "SHA-1",
        new TextEncoder().encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
      );
      await writeText(
        conn,
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" +
          "Connection: Upgrade\r\nSec-WebSocket-Accept: " +
          btoa(String.fromCharCode(...new Uint8Array(digest))) +
          `\r\nSec-WebSocket-Protocol: ${pick}\r\n\r\n`,
      );
      await readHead(conn); // until the gateway closes
    });
    await using gw = await startMain(gatewayArgs(up.port, dir));
    const page = await driver.browse(
      "subprotocol",
      `http://localhost:${gw.port}`,
    );
    // RFC 6455 §4.1: a client fails the connection when the server's
    // protocol is not one it offered; the gateway relays the upstream's
    // choice (nginx too) and leaves that to the browser.
    deepStrictEqual(page.picks, ["open: chat", "failed"]);
  },
);

check(
  "browser: with the upstream down the page sees 502 and the log holds the spec's lines",
  ON_LINUX,
  async (driver) => {
    await using tmp = await tempDir();
    const dir = tmp.path;
    const dead = refusedPort();
    await using gw = await startMain(gatewayArgs(dead, dir));
    const page = await driver.browse("down", `http://localhost:${gw.port}`);
    match(page.login!, /^502 <html>/);
    match(page.title!, /^502 <html>/);
    strictEqual(page.ws, "error");
    const log = `${dir}/error.log`;
    await waitFor(() =>
      Deno.readTextFileSync(log).trim().split("\n").length >= 3
    );
    const lines = (await Deno.readTextFile(log)).trim().split("\n");
    // The gateway listens on both loopbacks, so Chromium reaches
    // "localhost" over IPv6 and the true client address is ::1 (printed
    // without brackets, as nginx prints IPv6). The spec's example shows
    // 127.0.0.1 because its nginx listened on IPv4 only.
    const client = lines[0]!.match(/, client: ([^,]+),/)![1]!;
    strictEqual(["::1", "127.0.0.1"].includes(client), true, client);
    const line = (method: string, path: string) =>
      `TIME [error] PID#TID: *N connect() failed (111: Connection refused) while connecting to upstream, client: ${client}, server: localhost, request: "${method} /api${path} HTTP/1.1", upstream: "http://127.0.0.1:${dead}${path}", host: "localhost:${gw.port}"`;
    // Exactly one line per attempt, as the interface spec shows them. The
    // page's fetches carry the page as Referer; Chromium sends none with a
    // WebSocket handshake.
    deepStrictEqual(
      lines.map(maskErrorLine),
      [
        `${line("POST", "/loginms")}, referrer: "http://localhost:${gw.port}/"`,
        `${
          line("POST", "/Home31/UpDateTitle")
        }, referrer: "http://localhost:${gw.port}/"`,
        line("GET", "/hub"),
      ],
    );
  },
);

check(
  "browser: deep link, revalidated asset and precompressed asset",
  ON_LINUX,
  async (driver) => {
    await using tmp = await tempDir();
    const dir = tmp.path;
    await using up = startStationUpstream();
    await using gw = await startMain(gatewayArgs(up.port, dir));
    const page = await driver.browse("assets", `http://localhost:${gw.port}`);
    // A deep link into the single-page app gets the app.
    strictEqual(page.deepStatus, 200);
    strictEqual(page.route, "/orders/42");
    // A reload revalidates app.js (Cache-Control: no-cache) and gets 304.
    deepStrictEqual(page.statuses["/app.js"], [200, 304]);
    // The browser accepts gzip and gets the .gz sidecar, decoded fine.
    strictEqual(page.encodings["/assets/lib.js"], "gzip");
    strictEqual(page.lib, "loaded from the precompressed file");
  },
);

check(
  "browser: the built-in page shows the logs, the last error and a status that refreshes itself",
  ON_LINUX,
  async (driver) => {
    await using tmp = await tempDir();
    const dir = tmp.path;
    const dead = refusedPort();
    await using gw = await startMain([
      ...gatewayArgs(dead, dir).slice(0, 4),
      "--root",
      `${dir}/no-app-here`,
      "--error-log",
      `${dir}/error.log`,
      "--access-log",
      `${dir}/access.log`,
    ]);
    const base = `http://localhost:${gw.port}`;
    const refused = await fetch(`${base}/api/loginms`, {
      method: "POST",
      body: "{}",
    });
    await refused.body?.cancel();
    strictEqual(refused.status, 502);
    // The driver answers once the page is shown and Chromium has scheduled
    // its refresh; then the upstream comes up on the port it refused on,
    // and the page has to notice by refreshing itself.
    const page = await driver.browse("default", base);
    // The page the browser was shown was the gateway's answer to it.
    await waitFor(() => {
      try {
        return Deno.readTextFileSync(`${dir}/access.log`).includes(
          '"GET / HTTP/1.1" 200',
        );
      } catch {
        return false;
      }
    });
    await using _up = Deno.serve(
      { hostname: "127.0.0.1", port: dead, onListen() {} },
      () => new Response("ok"),
    );
    const later = await driver.browse("refresh");
    match(
      page.state!,
      /^The upstream does not answer: connect\(\) failed \(111: Connection refused\)\./,
    );
    match(page.state!, /since \d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \(\d+ s\)/);
    // The browser shows the paths and the line as written: the escaping
    // round-trips.
    match(page.logFiles!, new RegExp(`Error log: ${dir}/error\\.log`));
    match(page.logFiles!, new RegExp(`Access log: ${dir}/access\\.log`));
    match(
      page.lastError!,
      /\[error\] \d+#\d+: \*\d+ connect\(\) failed \(111: Connection refused\) while connecting to upstream, client: [^,]+, server: localhost, request: "POST \/api\/loginms HTTP\/1\.1"/,
    );
    strictEqual(
      page.lastError,
      (await Deno.readTextFile(`${dir}/error.log`)).trim().split("\n").at(-1),
    );
    // Chromium scheduled the refresh from the page's own meta tag, to the
    // page itself after DEFAULT_PAGE_REFRESH_SECONDS, and fired it itself.
    deepStrictEqual(page.scheduled, {
      delay: DEFAULT_PAGE_REFRESH_SECONDS,
      reason: "metaTagRefresh",
      url: `${base}/`,
    });
    match(later.laterState!, /^The upstream answers \(HTTP 200\), since /);
    strictEqual(later.refreshes!.length >= 1, true, "refreshed itself");
    for (const refresh of later.refreshes!) {
      deepStrictEqual(refresh, { reason: "metaTagRefresh", url: `${base}/` });
    }
    strictEqual(later.statuses["/"]!.length >= 2, true, "reloaded itself");
  },
);

check(
  "browser: through the common pair to https:// (HTTP/2), the app's POSTs and WebSocket work",
  ON_LINUX,
  async (driver) => {
    await using up = startStationUpstream();
    const [plain, tls] = [freePort(), freePort()];
    await using p = await nginxPrefix(
      `events {}
http {
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  server { listen localhost:${plain}; return 301 https://$host:${tls}$request_uri; }
  server {
    listen localhost:${tls} ssl http2;
    ssl_certificate station.crt;
    ssl_certificate_key station.key;
    root ${APP};
    location /api/ {
      proxy_pass http://127.0.0.1:${up.port}/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
    }
  }
}
`,
    );
    const dir = p.prefix;
    await makeCertificate(`${dir}/conf`);
    await using _gw = await startMain(["--nginx-conf", p.conf]);
    const page = await driver.browse("tls", `http://localhost:${plain}`);
    strictEqual(page.url, `https://localhost:${tls}/`);
    strictEqual(page.protocol, "h2");
    strictEqual(page.login, "200 welcome demo");
    strictEqual(page.title, "200 title Station 7");
    strictEqual(page.ws, "echo:ping-from-browser");
    strictEqual(await Deno.readTextFile(`${dir}/logs/error.log`), "");
  },
);

/** `<meta charset="gbk">` and Chinese text in GBK bytes (no UTF-8 anywhere). */
const GBK_TEXT = "\u4e2d\u6587\u9875\u9762 \u4f60\u597d\u4e16\u754c"; // 中文页面 你好世界
const GBK_PAGE = new Uint8Array([
  ...new TextEncoder().encode(
    '<!doctype html><html><head><meta charset="gbk"><title>gbk</title></head><body><p>',
  ),
  // 中 文 页 面, a space, 你 好 世 界 (GB 2312 rows, two bytes each).
  ...[0xd6, 0xd0, 0xce, 0xc4, 0xd2, 0xb3, 0xc3, 0xe6, 0x20],
  ...[0xc4, 0xe3, 0xba, 0xc3, 0xca, 0xc0, 0xbd, 0xe7],
  ...new TextEncoder().encode("</p></body></html>\n"),
]);
const GBK_SITE = { "gbk.html": GBK_PAGE };
htmlAhead([GBK_SITE]);

check(
  "browser: a GBK page served without a charset renders as through nginx 1.22",
  suiteNeeds("browser_test.ts", ["chromium", "nginx"]),
  async (driver) => {
    // The bytes say what the test expects before any server is involved.
    strictEqual(
      new TextDecoder("gbk").decode(GBK_PAGE).includes(GBK_TEXT),
      true,
    );
    await using nginx = await startNginxSite({
      server: "root $HTML; location / { }",
      files: GBK_SITE,
    });
    await using tmp = await tempDir();
    const dir = tmp.path;
    await Deno.mkdir(`${dir}/conf`);
    await Deno.mkdir(`${dir}/logs`);
    const conf = `${dir}/conf/nginx.conf`;
    const port = freePort();
    await Deno.writeTextFile(
      conf,
      `events {}\nhttp {\n  error_log ${dir}/error.log;\n  access_log off;\n  include ${STOCK_MIME_TYPES_PATH};\n  server {\n    listen 127.0.0.1:${port};\n    root ${nginx.root};\n  }\n}\n`,
    );
    await using fromConf = await startMain(["--nginx-conf", conf]);
    // The built-in configuration, as a station runs it from its flags.
    await using fromFlags = await startMain([
      "--listen",
      "0",
      "--upstream",
      `http://127.0.0.1:${refusedPort()}`,
      "--root",
      nginx.root,
      "--error-log",
      `${dir}/flags-error.log`,
      "--access-log",
      "off",
    ]);
    // nginx first, then each gateway, in one browser.
    const pages = await driver.browse(
      "text",
      ...[nginx.port, fromConf.port, fromFlags.port].map((port) =>
        `http://127.0.0.1:${port}/gbk.html`
      ),
    );
    for (const [i, page] of (pages.texts ?? []).entries()) {
      strictEqual(page.text, GBK_TEXT, String(i));
      strictEqual(page.charset, "GBK", String(i));
    }
    strictEqual(pages.texts?.length, 3);
  },
);

// One driver and one Chromium serve every check (steps of one test, so the
// driver's process ends within the test that started it).
Deno.test(
  "browser: a real Chromium against the gateway",
  ON_LINUX,
  async (t) => {
    await using driver = await startDriver();
    for (const { name, ignore, fn } of CHECKS) {
      await t.step({ name, ignore, fn: () => fn(driver) });
    }
  },
);
