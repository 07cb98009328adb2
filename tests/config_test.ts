import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  parseConfigFile,
  parseListen,
  parseSize,
  parseUpstream,
  parseUpstreamServer,
  resolveConfig,
} from "../src/config.ts";
import { parseCliArgs } from "../src/cli.ts";

Deno.test("parseUpstream() accepts http URLs with a host, 8080 by default", async (t) => {
  const cases: [string, string, string][] = [
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080", "127.0.0.1:8080"],
    ["http://127.0.0.1", "http://127.0.0.1:8080", "127.0.0.1:8080"],
    ["http://10.1.2.3:9000/", "http://10.1.2.3:9000", "10.1.2.3:9000"],
    ["HTTP://Station-PC:80", "http://station-pc", "station-pc:80"],
    ["http://[::1]:8080", "http://[::1]:8080", "[::1]:8080"],
  ];
  for (const [input, origin, peer] of cases) {
    await t.step(input, () => {
      const u = parseUpstream(input);
      strictEqual(u.origin, origin);
      strictEqual(u.peer, peer);
    });
  }
  for (
    const bad of [
      "https://x",
      "http://",
      "x:8080",
      "http://a/b",
      "http://a?b",
      "http://u@a",
      "http://a:0",
      "http://a:70000",
      "ftp://a",
      "",
    ]
  ) {
    throws(
      () => parseUpstream(bad),
      new RegExp(`Cannot parse upstream "${bad.replace(/[?/]/g, "\\$&")}"`),
    );
  }
});

Deno.test("parseListen() reads [host:]port and keeps a bare port on loopback", () => {
  deepStrictEqual(parseListen("8081"), { hostname: "localhost", port: 8081 });
  deepStrictEqual(parseListen("127.0.0.1:0"), {
    hostname: "127.0.0.1",
    port: 0,
  });
  deepStrictEqual(parseListen("[::1]:8081"), { hostname: "::1", port: 8081 });
  deepStrictEqual(parseListen("0.0.0.0:80"), { hostname: "0.0.0.0", port: 80 });
  throws(() => parseListen("65536"), RangeError);
  throws(() => parseListen("host:"), TypeError);
});

Deno.test("parseSize() reads nginx sizes", () => {
  strictEqual(parseSize("0", "s"), 0);
  strictEqual(parseSize("512k", "s"), 524288);
  strictEqual(parseSize("16M", "s"), 16777216);
  strictEqual(parseSize("1g", "s"), 1073741824);
  throws(() => parseSize("1.5m", "s"), TypeError);
});

Deno.test("parseConfigFile() names unknown keys and wrong types", () => {
  deepStrictEqual(
    parseConfigFile('{"upstream": "http://a", "logKeep": 3}', "f"),
    { upstream: "http://a", logKeep: 3 },
  );
  throws(
    () => parseConfigFile('{"Upstream": "x"}', "f"),
    /unknown key "Upstream"/,
  );
  throws(
    () => parseConfigFile('{"addForwardedHeaders": "yes"}', "f"),
    /key "addForwardedHeaders" must be a boolean/,
  );
  throws(() => parseConfigFile("{", "f"), SyntaxError);
});

Deno.test("resolveConfig() merges defaults < file < flags and anchors paths", () => {
  const c = resolveConfig({ serverName: "from-file", root: "app" }, {
    serverName: "from-flag",
    accessLog: "off",
  }, "/opt/gw");
  strictEqual(c.serverName, "from-flag");
  strictEqual(c.root, "/opt/gw/app");
  strictEqual(c.accessLog, null);
  strictEqual(c.errorLog, "/opt/gw/logs/error.log");
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
  throws(() => parseCliArgs(["--nope"]), /Unknown option "--nope"/);
  throws(() => parseCliArgs(["--log-keep", "x"]), /Cannot parse log-keep "x"/);
});

Deno.test("parseUpstreamServer() reads nginx's server parameters", () => {
  const s = parseUpstreamServer(
    "http://10.0.0.5:9000 max_fails=3 fail_timeout=30s",
  );
  deepStrictEqual(
    {
      peer: s.address.peer,
      backup: s.backup,
      maxFails: s.maxFails,
      failTimeoutMs: s.failTimeoutMs,
    },
    { peer: "10.0.0.5:9000", backup: false, maxFails: 3, failTimeoutMs: 30000 },
  );
  strictEqual(parseUpstreamServer("http://127.0.0.1 backup").backup, true);
  throws(
    () => parseUpstreamServer("http://a weight=2"),
    /unknown parameter "weight=2"/,
  );
  throws(
    () => parseUpstreamServer("http://a fail_timeout=x"),
    /Cannot parse fail_timeout "x"/,
  );
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
  throws(
    () => parseConfigFile('{"upstream": [1]}', "f"),
    /key "upstream" must be a string or a list of strings/,
  );
});
