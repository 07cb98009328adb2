import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { resolve } from "node:path";
import { resolveConfig } from "../../src/config/config.ts";
import { parseCliArgs } from "../../src/config/cli.ts";

Deno.test("resolveConfig() merges defaults < file < flags and anchors paths", () => {
  const c = resolveConfig({ serverName: "from-file", root: "app" }, {
    serverName: "from-flag",
    accessLog: "off",
  }, "/opt/gw");
  strictEqual(c.serverName, "from-flag");
  // Windows resolves "/opt/gw" onto the current drive, as nginx for Windows.
  strictEqual(c.root, resolve("/opt/gw/app"));
  strictEqual(c.accessLog, null);
  strictEqual(c.errorLog, resolve("/opt/gw/logs/error.log"));
  strictEqual(c.listen.port, 8081);
  strictEqual(c.upstreams.length, 1);
  strictEqual(c.upstreams[0]!.address.origin, "http://127.0.0.1:8080");
  strictEqual(c.upstreamGroup, "backend");
  strictEqual(c.errorLogLevel, "error");
  strictEqual(c.logMaxBytes, 16 * 1024 * 1024);
  strictEqual(
    resolveConfig({}, { errorLog: "/var/log/e.log" }, "/opt").errorLog,
    "/var/log/e.log",
  );
  throws(
    () => resolveConfig({}, { serverName: "two words" }, "/"),
    /server-name/,
  );
  throws(() => resolveConfig({ logKeep: -1 }, {}, "/"), /log-keep/);
});

Deno.test("resolveConfig() takes a server name that nginx reads as one word, and only that", () => {
  // nginx's blanks are space, tab, CR and LF (ngx_conf_read_token): a
  // no-break space, an em space or a form feed is part of the name.
  for (
    const name of ["\u00a010.3.142.130", "station\u2003gw", "a\fb", "站点"]
  ) {
    strictEqual(resolveConfig({}, { serverName: name }, "/").serverName, name);
  }
  for (const name of ["", "two words", "a\tb", "a\rb", "a\nb", 'a"b']) {
    throws(
      () => resolveConfig({}, { serverName: name }, "/"),
      /^TypeError: Cannot parse server-name /,
      JSON.stringify(name),
    );
  }
});

Deno.test("parseCliArgs() maps flags to settings", () => {
  const cli = parseCliArgs([
    "--upstream",
    "http://10.0.0.5",
    "--add-forwarded-headers",
    "--log-keep",
    "3",
    "-c",
    "gw.json",
  ]);
  deepStrictEqual(cli.settings, {
    upstream: "http://10.0.0.5",
    addForwardedHeaders: true,
    logKeep: 3,
  });
  strictEqual(cli.configPath, "gw.json");
  throws(() => parseCliArgs(["--nope"]), /unknown option "--nope"/);
  throws(() => parseCliArgs(["--log-keep", "x"]), /Cannot parse log-keep "x"/);
});

Deno.test("resolveConfig() takes a list of upstreams and refuses an all-backup list", () => {
  const c = resolveConfig(
    { upstream: ["http://10.0.0.5", "http://127.0.0.1 backup"] },
    {},
    "/",
  );
  deepStrictEqual(c.upstreams.map((u) => [u.address.peer, u.backup]), [[
    "10.0.0.5:8080",
    false,
  ], ["127.0.0.1:8080", true]]);
  throws(
    () => resolveConfig({}, { upstream: ["http://a backup"] }, "/"),
    /every upstream is a backup/,
  );
  throws(
    () => resolveConfig({}, { upstreamGroup: "a b" }, "/"),
    /upstream-group/,
  );
});

Deno.test("resolveConfig() reads --proxy-buffer-size, nginx's one page by default", () => {
  strictEqual(resolveConfig({}, {}, "/").proxyBufferSize, 4096);
  strictEqual(
    resolveConfig({ proxyBufferSize: "8k" }, {}, "/").proxyBufferSize,
    8192,
  );
  const cli = parseCliArgs(["--proxy-buffer-size", "16k"]);
  strictEqual(
    resolveConfig({}, cli.settings, "/").proxyBufferSize,
    16384,
  );
  for (const bad of ["0", "512", "2m", "4x"]) {
    throws(
      () => resolveConfig({}, { proxyBufferSize: bad }, "/"),
      /^TypeError: Cannot parse proxy-buffer-size /,
    );
  }
});

Deno.test("resolveConfig() refuses a NUL in any path setting, from the file or a flag", async (t) => {
  const cases: [string, Record<string, string>][] = [
    ["root", { root: "ht\0ml" }],
    ["error-log", { errorLog: "logs/e\0rror.log" }],
    ["access-log", { accessLog: "logs/\0" }],
  ];
  for (const [name, settings] of cases) {
    await t.step(name, () => {
      const value = Object.values(settings)[0]!;
      const expected = {
        name: "TypeError",
        message:
          `Cannot parse ${name} "${value}": a path cannot hold a NUL byte`,
      };
      throws(() => resolveConfig(settings, {}, "/opt/gw"), expected);
      throws(() => resolveConfig({}, settings, "/opt/gw"), expected);
    });
  }
});

Deno.test("resolveConfig() refuses an empty path setting, from the file or a flag: it would be the program's own folder", async (t) => {
  // An unset variable in a deployment script gives `--root ""`: served,
  // the program's folder held its config and logs.
  const cases: [string, Record<string, string>][] = [
    ["root", { root: "" }],
    ["error-log", { errorLog: "" }],
    ["access-log", { accessLog: "" }],
    ["client-body-temp-path", { clientBodyTempPath: "" }],
  ];
  for (const [name, settings] of cases) {
    await t.step(name, () => {
      const expected = {
        name: "TypeError",
        message: `Cannot parse ${name} "": expected a path, not an empty value`,
      };
      throws(() => resolveConfig(settings, {}, "/opt/gw"), expected);
      throws(() => resolveConfig({}, settings, "/opt/gw"), expected);
    });
  }
});
