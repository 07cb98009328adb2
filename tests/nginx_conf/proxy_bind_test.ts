/**
 * `proxy_bind`: the runtime's connect has no local address (Deno.connect
 * takes none), so the gateway connects from the address the system picks.
 * For a back end on the same machine that is the loopback address of its
 * family, which is what `proxy_bind 127.0.0.1` / `::1` asks for: accepted
 * with one warning. Any other address, `transparent` or a variable would
 * change what the back end sees: refused, not taken for an unknown directive.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTest, station } from "./_station.ts";
import { fileWith, messages } from "./_messages.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

const LOOPBACK =
  '"proxy_bind" is ignored: the runtime connects from the address the system picks, the loopback address itself for a back end on this machine';
const REFUSED = (value: string) =>
  `"proxy_bind ${value}" is not supported: the runtime cannot choose the local address of a connection`;

const CASES: [value: string, said: string[]][] = [
  ["off", []],
  ["127.0.0.1", [LOOPBACK]],
  ["::1", [LOOPBACK]],
  ["127.0.0.2", [REFUSED("127.0.0.2")]],
  ["192.168.1.10", [REFUSED("192.168.1.10")]],
  ["127.0.0.1 transparent", [REFUSED("127.0.0.1 transparent")]],
  ["$remote_addr", [REFUSED("$remote_addr")]],
];

Deno.test("--check accepts proxy_bind off and a loopback address, refuses any other, at every level", () => {
  for (const [value, said] of CASES) {
    for (const level of ["http", "server", "location"] as const) {
      deepStrictEqual(
        messages(fileWith(`proxy_bind ${value};`, level)),
        said,
        `${value} in ${level}`,
      );
    }
  }
});

Deno.test(
  "nginx -t and --check both accept a station file with proxy_bind 127.0.0.1",
  ON_LINUX,
  async () => {
    await using s = station(
      "stock",
      (text) =>
        text.replace(
          "proxy_pass http://127.0.0.1:8080/;",
          "proxy_bind 127.0.0.1;\nproxy_pass http://127.0.0.1:8080/;",
        ),
    );
    const nginx = await nginxTest(s);
    strictEqual(nginx.ok, true, `nginx -t: ${nginx.emerg}`);
    const result = loadNginxConf(s.conf);
    strictEqual(result.ok ? "ok" : result.message, "ok");
  },
);
