/**
 * `--nginx-conf`, `--check` and `--print-config` through the real entry
 * point, on station folders built from the corpus: `main()`'s start in this
 * process (`runStartup`); the exit code reaching the shell is
 * `main_test.ts`'s.
 */
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { parseCliArgs } from "../../src/config/cli.ts";
import { join } from "node:path";
import { refusedPort, startUpstream } from "../_utils.ts";
import { runStartup } from "../_in_process.ts";
import { nginxTest, station } from "./_station.ts";
import { nginxPrefix } from "../_prefix.ts";

/**
 * `--check --nginx-conf FILE`, listening on a free port: port 80 would need
 * root, and the flag overrides the file's listen.
 */
function checkConf(conf: string): ReturnType<typeof runStartup> {
  return runStartup([
    "--check",
    "--nginx-conf",
    conf,
    "--listen",
    "127.0.0.1:0",
  ]);
}

Deno.test("parseCliArgs() takes --nginx-conf and --print-config", () => {
  const cli = parseCliArgs([
    "--nginx-conf",
    "C:\\nginx\\conf\\nginx.conf",
    "--print-config",
  ]);
  deepStrictEqual([cli.nginxConfPath, cli.printConfig], [
    "C:\\nginx\\conf\\nginx.conf",
    true,
  ]);
});

Deno.test("--check --nginx-conf passes the stock station file, listing the warnings", async () => {
  await using s = station("stock");
  // Port 80 would need root: the flag overrides the file's listen.
  const { code, stderr } = await checkConf(s.conf);
  strictEqual(code, 0, stderr);
  match(
    stderr,
    /\[warn\] "sendfile" is ignored: .* in .*conf[\\/]nginx.conf:27\n/,
  );
  strictEqual(
    stderr.includes(`the configuration file ${s.conf} syntax is ok\n`),
    true,
  );
  match(stderr, /configuration test is successful/);
});

Deno.test("--check --nginx-conf binds every listen port and probes the file's own upstreams, never the built-in /api/ one", async (t) => {
  await t.step("a file without proxy_pass: no upstream line", async () => {
    await using s = station("stock_no_api");
    const { code, stderr } = await checkConf(s.conf);
    strictEqual(code, 0, stderr);
    strictEqual(
      /goes to|answer|client app folder/.test(stderr),
      false,
      stderr,
    );
  });
  await t.step("every listen port is bound, not only the first", async () => {
    using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = busy.addr.port;
    await using s = station(
      "stock_no_api",
      (text) =>
        text.replace(
          /\}\s*$/,
          `    server { listen 127.0.0.1:${port}; }\n}\n`,
        ),
    );
    const { code, stderr } = await checkConf(s.conf);
    strictEqual(code, 1, stderr);
    match(
      stderr,
      new RegExp(
        `\\[emerg\\] bind\\(\\) to 127\\.0\\.0\\.1:${port} failed \\(`,
      ),
    );
  });
  await t.step("an upstream{} with a server down and one up", async () => {
    await using up = startUpstream();
    const down = refusedPort();
    await using s = station(
      "upstream_backup",
      (text) =>
        text.replace("127.0.0.1:8080", `127.0.0.1:${down}`)
          .replace("127.0.0.1:8090", `127.0.0.1:${up.port}`),
    );
    const { code, stderr } = await checkConf(s.conf);
    strictEqual(code, 0, stderr);
    match(
      stderr,
      new RegExp(
        `\\[warn\\] upstream "backend" server http://127\\.0\\.0\\.1:${down}/ does not answer now: connect\\(\\) failed \\([^)]*\\); requests proxied to it get 502 until it does\\n`,
      ),
    );
    match(
      stderr,
      new RegExp(
        `upstream "backend" server http://127\\.0\\.0\\.1:${up.port}/ answers`,
      ),
    );
    strictEqual(stderr.includes("/api/ goes to"), false, stderr);
  });
  await t.step(
    "an upstream{} fastcgi_pass names is not probed over HTTP",
    async () => {
      const down = refusedPort();
      await using s = station(
        "upstream_backup",
        (text) =>
          text.replace("127.0.0.1:8080", `127.0.0.1:${down}`)
            .replace(
              /proxy_pass http:\/\/backend\/?;/,
              "fastcgi_pass backend;",
            ),
      );
      const { code, stderr } = await checkConf(s.conf);
      strictEqual(code, 0, stderr);
      strictEqual(stderr.includes(`127.0.0.1:${down}`), false, stderr);
    },
  );
});

Deno.test(
  "--check --nginx-conf accepts a server_name nginx reads as one word, a no-break space in it too",
  { ignore: Deno.build.os !== "linux" },
  async () => {
    // Typed into a real station file: `server_name  <U+00A0>10.3.142.130;`.
    // nginx's blanks are four ASCII bytes (ngx_conf_read_token), so the name
    // starts with the no-break space and nginx accepts the file.
    await using s = station("stock", (text) =>
      text.replace(
        "server_name  localhost;",
        "server_name  \u00a010.3.142.130;",
      ));
    const nginx = await nginxTest(s);
    strictEqual(nginx.ok, true, `nginx -t: ${nginx.emerg}`);
    const { code, stderr } = await checkConf(s.conf);
    strictEqual(code, 0, stderr);
    match(stderr, /configuration test is successful/);
  },
);

Deno.test("--check --nginx-conf fails as nginx -t does on a syntax error", async () => {
  await using s = station("syntax_brace");
  const { code, stderr } = await runStartup([
    "--check",
    "--nginx-conf",
    s.conf,
  ]);
  strictEqual(code, 1);
  strictEqual(
    stderr,
    `station-gateway: [emerg] unexpected "}" in ${s.conf}:50\n` +
      `station-gateway: configuration file ${s.conf} test failed\n`,
  );
});

Deno.test("--check --nginx-conf names every directive the gateway does not reproduce in one run", async () => {
  await using s = station("emerg_auth", (text) =>
    refusedAuth(text).replace(
      "location / {",
      "location / {\n            proxy_cache zone;\n            sub_filter a b;",
    ));
  const { code, stderr } = await runStartup([
    "--check",
    "--nginx-conf",
    s.conf,
  ]);
  strictEqual(code, 1);
  const emerg = stderr.split("\n").filter((l) => l.includes("[emerg]"));
  deepStrictEqual(
    emerg.map((l) =>
      l.replace(/ is not supported: .* in .*nginx.conf:(\d+)$/, " :$1")
    ),
    [
      'station-gateway: [emerg] "proxy_cache zone" :44',
      'station-gateway: [emerg] "sub_filter" :45',
      'station-gateway: [emerg] "auth_request" :51',
      'station-gateway: [emerg] "proxy_set_body" :52',
    ],
  );
  match(stderr, /test failed\n$/);
});

Deno.test("a start from a refused nginx.conf exits 1 and leaves the line in the prefix's error log", async () => {
  await using s = station("emerg_auth", refusedAuth);
  // In process: a refused start's exit code reaches the shell as main_test's
  // processes show (the bad flag's 2, the port taken's 1).
  const { code, stderr } = await runStartup(["--nginx-conf", s.conf]);
  strictEqual(code, 1);
  match(stderr, /\[emerg\] "auth_request" is not supported/);
  match(
    await Deno.readTextFile(`${s.prefix}/logs/error.log`),
    /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[emerg\] \d+#\d+: "auth_request" .* in .*nginx.conf:49\n[^\n]*"proxy_set_body" [^\n]*:50\n$/,
  );
});

Deno.test("--print-config prints an nginx.conf as the engine runs it, includes in place, and it reads back", async () => {
  await using s = station("includes");
  const { code, stdout } = await runStartup([
    "--print-config",
    "--nginx-conf",
    s.conf,
  ]);
  strictEqual(code, 0);
  strictEqual(stdout.startsWith(`# configuration file ${s.conf}:\n`), true);
  strictEqual(stdout.includes("include "), false);
  const again = join(s.prefix, "conf", "printed.conf");
  await Deno.writeTextFile(again, stdout);
  const first = loadNginxConf(s.conf);
  const second = loadNginxConf(again);
  strictEqual(first.ok && second.ok, true);
  if (first.ok && second.ok) strictEqual(second.text, first.text);
});

Deno.test("the config file's nginxConf key runs that nginx.conf", async () => {
  await using s = station("stock");
  const json = `${s.prefix}/gateway.json`;
  await Deno.writeTextFile(json, JSON.stringify({ nginxConf: s.conf }));
  const { code, stdout } = await runStartup([
    "--print-config",
    "--config",
    json,
  ]);
  strictEqual(code, 0);
  strictEqual(stdout.startsWith(`# configuration file ${s.conf}:\n`), true);
  match(stdout, /error_page 500 502 503 504 \/50x.html;/);
});

Deno.test("a refused nginx.conf value holding CR, LF or ESC stays one [emerg] line on stderr and in the log", async (t) => {
  const values = [
    'server_name "a\nb";',
    '"foo\r\nbar\x1b[31m" 1;',
    'listen "127.0.0.1:1\n8299";',
  ];
  for (const value of values) {
    await t.step(JSON.stringify(value), async () => {
      await using p = await nginxPrefix(`http { server { ${value} } }\n`, {
        dirs: ["conf"],
      });
      const { code, stderr } = await runStartup(["--nginx-conf", p.conf]);
      strictEqual(code, 1);
      const lines = stderr.split("\n").slice(0, -1);
      for (const line of lines) {
        match(line, /^station-gateway: \[(warn|emerg)\] /);
      }
      const emerg = lines.filter((l) => l.includes("[emerg]"));
      strictEqual(emerg.length, 1, stderr);
      match(emerg[0]!, / in .*nginx\.conf:\d+$/);
      const log = await Deno.readTextFile(join(p.prefix, "logs", "error.log"));
      match(
        log,
        /^\d{4}\/\d\d\/\d\d [\d:]+ \[emerg\] [^\n]* in [^\n]*nginx\.conf:\d+\n$/,
      );
      // deno-lint-ignore no-control-regex
      strictEqual(/[\x00-\x09\x0b-\x1f]/.test(log), false, log);
    });
  }
});

Deno.test("a NUL in an nginx.conf's root refuses the start, not just --check", async () => {
  await using p = await nginxPrefix(
    "http { server { listen 127.0.0.1:0; server_name st; " +
      'root "html\0x"; location /api/ { proxy_pass http://127.0.0.1:9/; } } }\n',
    { dirs: ["conf"] },
  );
  // In process: runStartup() throws if the start would serve.
  const { code, stderr } = await runStartup(["--nginx-conf", p.conf]);
  strictEqual(code, 1, stderr);
  match(
    stderr,
    /\[emerg\] "root html\\x00x" is not supported: a path cannot hold a NUL byte in .*nginx\.conf:1\n$/,
  );
});

Deno.test("--print-config prints the flags' built-in configuration as an nginx.conf that runs", async () => {
  const { code, stdout } = await runStartup([
    "--print-config",
    "--listen",
    "127.0.0.1:9001",
    "--upstream",
    "http://10.20.0.5:8080",
  ]);
  strictEqual(code, 0);
  match(stdout, /listen 127\.0\.0\.1:9001;/);
  match(stdout, /server 10\.20\.0\.5:8080 /);
  await using p = await nginxPrefix(stdout, { dirs: ["conf"] });
  const loaded = loadNginxConf(p.conf);
  strictEqual(loaded.ok ? "ok" : loaded.message, "ok");
});

/** The station's auth lines turned into directives the gateway refuses. */
function refusedAuth(text: string): string {
  return text.replace('auth_basic "station";', "auth_request /auth;")
    .replace("auth_basic_user_file htpasswd;", "proxy_set_body x;");
}
