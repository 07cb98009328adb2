import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  formatDuration,
  renderDefaultPage,
} from "../../src/static/default_page.ts";
import {
  rawRequest,
  readHead,
  refusedPort,
  startGateway,
  startRawUpstream,
  writeText,
} from "../_utils.ts";

function get(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;
}

Deno.test("default page: concurrent and repeated requests share at most one probe a second", async () => {
  await using up = startRawUpstream(async (conn) => {
    await readHead(conn);
    await writeText(
      conn,
      "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
    );
  });
  await using gw = await startGateway({ upstreamUrl: up.origin });
  const started = Date.now();
  const burst = await Promise.all(
    Array.from({ length: 40 }, () => rawRequest(gw.port, get("/"))),
  );
  for (const page of burst) match(page, /The upstream answers \(HTTP 404\)/);
  for (let i = 0; i < 60 && Date.now() - started < 1500; i++) {
    match(await rawRequest(gw.port, get("/")), /^HTTP\/1\.1 200 /);
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (Date.now() - started) / 1000;
  // One probe, then at most one per second after a result.
  strictEqual(
    up.connections >= 1 && up.connections <= Math.floor(seconds) + 1,
    true,
    `${up.connections} probes in ${seconds} s`,
  );
});

Deno.test("default page: shows the last error line, escaped", async () => {
  await using gw = await startGateway({
    upstreamUrl: `http://127.0.0.1:${refusedPort()}`,
  });
  match(await rawRequest(gw.port, get("/api/x'y?a=1&b=2")), /^HTTP\/1\.1 502 /);
  const page = await rawRequest(gw.port, get("/"));
  match(page, /<pre id="last-error">\d{4}\/\d\d\/\d\d [\d:]+ \[error\] /);
  match(
    page,
    /request: &#34;GET \/api\/x&#39;y\?a=1&#38;b=2 HTTP\/1\.1&#34;, upstream: /,
  );
  match(page, /The upstream does not answer: connect\(\) failed/);
  match(page, /<meta http-equiv="refresh" content="5">/);
});

Deno.test("renderDefaultPage() escapes what it shows and says what it knows", async (t) => {
  const base = {
    version: "1.0.0",
    upstream: "http://127.0.0.1:8080",
    root: "C:\\station\\<html>",
    health: {
      answers: true,
      detail: "HTTP 200",
      since: new Date(2026, 10, 23, 12, 0, 0).getTime(),
      checkedAt: 0,
    },
    probeTimeoutMs: 3000,
    diagnostics: true,
    lastError: null,
    now: new Date(2026, 10, 23, 12, 3, 5).getTime(),
  };
  const cases: [
    string,
    Partial<Parameters<typeof renderDefaultPage>[0]>,
    RegExp[],
  ][] = [
    ["answers, since when", {}, [
      /id="upstream-state" class="ok">The upstream answers \(HTTP 200\), since 2026\/11\/23 12:00:00 \(3 min\)/,
      /C:\\station\\&#60;html&#62;/,
      /The log files were not given/,
      /None since the gateway started/,
    ]],
    ["log paths escaped, access log off", {
      logFiles: { error: "C:\\logs\\a&b\\error.log", access: null },
    }, [
      /Error log: <code>C:\\logs\\a&#38;b\\error\.log<\/code>/,
      /Access log: off/,
    ]],
    ["does not answer, with the reason escaped", {
      health: { ...base.health, answers: false, detail: '<x> & "y"' },
    }, [
      /class="bad">The upstream does not answer: &#60;x&#62; &#38; &#34;y&#34;\./,
    ]],
    ["the last error line escaped", {
      lastError: `x [error] 1#1: *2 <script>alert('x')</script>`,
    }, [
      /<pre id="last-error">x \[error\] 1#1: \*2 &#60;script&#62;alert\(&#39;x&#39;\)&#60;\/script&#62;<\/pre>/,
    ]],
    ["another machine sees no log paths and no error line", {
      diagnostics: false,
      logFiles: { error: "C:\\logs\\error.log", access: null },
      lastError: "x [error] 1#1: *2 client: 10.0.0.7",
    }, [
      /shown on the station itself/,
      /^(?![\s\S]*(?:10\.0\.0\.7|error\.log<))/,
    ]],
  ];
  for (const [name, change, patterns] of cases) {
    await t.step(name, () => {
      const html = renderDefaultPage({ ...base, ...change });
      for (const p of patterns) match(html, p);
      strictEqual(html.includes("<script"), false);
    });
  }
});

Deno.test("formatDuration() reads at a glance", () => {
  deepStrictEqual(
    [0, 42_000, 180_000, 5 * 3600_000 + 12 * 60_000, 51 * 3600_000, -5].map(
      formatDuration,
    ),
    ["0 s", "42 s", "3 min", "5 h 12 min", "2 d 3 h", "0 s"],
  );
});

Deno.test("renderDefaultPage() seen from the LAN names the station's address with its port, and says how to bring a down upstream back", () => {
  const base = {
    version: "1",
    upstream: "http://10.20.0.5:8080",
    root: "C:\\S\\html",
    probeTimeoutMs: 2000,
    diagnostics: false,
    lastError: null,
    now: 10_000,
  };
  const down = {
    answers: false,
    detail: "connect() failed (111: Connection refused)",
    since: 0,
    checkedAt: 0,
  };
  const up = { answers: true, detail: "HTTP 200", since: 0, checkedAt: 0 };
  const cases: [number | undefined, string][] = [
    [8081, "http://localhost:8081/"],
    [21081, "http://localhost:21081/"],
    [80, "http://localhost/"],
  ];
  for (const [port, address] of cases) {
    const html = renderDefaultPage({
      ...base,
      health: down,
      ...(port === undefined ? {} : { port }),
    });
    match(
      html,
      new RegExp(
        `id="log-files">[^<]*on the station itself: open <code>${
          address.replaceAll("/", "\\/")
        }</code> there`,
      ),
      `${port}`,
    );
    match(
      html,
      /id="remedy">To fix it, on the machine of <code>http:\/\/10\.20\.0\.5:8080<\/code>: start the application/,
    );
    strictEqual(
      renderDefaultPage({ ...base, health: up, port: 8081 }).includes(
        'id="remedy"',
      ),
      false,
    );
  }
});
