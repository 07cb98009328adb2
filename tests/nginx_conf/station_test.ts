/**
 * Station folders on the real file system, with the platform's own paths:
 * on Windows the prefix is `C:\…` and every path the gateway gets from the
 * file uses backslashes, as nginx for Windows resolves them.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { station } from "./_station.ts";

Deno.test("loadNginxConf() resolves a stock station's paths against its prefix", async () => {
  await using s = station("stock");
  const result = loadNginxConf(s.conf);
  if (!result.ok) throw new Error(result.message);
  deepStrictEqual(
    [
      result.prefix,
      result.settings.root,
      result.settings.errorLog,
      result.settings.accessLog,
    ],
    [
      s.prefix,
      join(s.prefix, "html"),
      join(s.prefix, "logs", "error.log"),
      join(s.prefix, "logs", "access.log"),
    ],
  );
  // The included mime.types types the files, as nginx's.
  strictEqual(
    result.engine.servers[0]!.conf.types.get("js"),
    "application/javascript",
  );
});

Deno.test("loadNginxConf() finds globbed and nested includes under the conf folder", async () => {
  await using s = station("includes");
  const result = loadNginxConf(s.conf);
  if (!result.ok) throw new Error(result.message);
  deepStrictEqual(
    [
      result.settings.listen,
      result.engine.servers[0]!.serverName,
      result.settings.upstream,
      result.settings.root,
    ],
    [
      "127.0.0.1:8081",
      "station-gw",
      ["http://127.0.0.1:8080"],
      join(s.prefix, "html"),
    ],
  );
});

Deno.test("loadNginxConf() names the included file and line of an error", async () => {
  await using s = station(
    "includes",
    (text) => text.replace("# the station's backend", "}"),
  );
  const result = loadNginxConf(s.conf);
  strictEqual(
    !result.ok && result.message,
    `unexpected "}" in ${join(s.prefix, "conf", "snippets", "api.inc")}:3`,
  );
});
