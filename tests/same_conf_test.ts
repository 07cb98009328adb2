/**
 * `bothSides()` (`_same_conf.ts`): both sides answer on their own ports
 * from their own prefixes, and disposing — or a side that does not start —
 * stops what runs and removes both prefixes.
 */
import { deepStrictEqual, match, rejects } from "node:assert/strict";
import { rawRequest, waitFor } from "./_utils.ts";
import { exists } from "./_prefix.ts";
import {
  bothSides,
  logLines,
  PROCESS,
  type SideName,
  TEMP,
} from "./_same_conf.ts";
import { suiteNeeds } from "./_prerequisites.ts";

const ON_LINUX = suiteNeeds("same_conf_test.ts", ["nginx"]);

/** Both sides' nginx.conf, with a directive the `broken` side refuses. */
function conf(broken?: SideName) {
  return (port: number, side: SideName, ports: readonly number[]) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  ${side === broken ? "" : "# "}not_a_directive on;
  server {
    listen 127.0.0.1:${port};
    listen 127.0.0.1:${ports[1]};
    location / { return 200 "$server_port\\n"; }
  }
}
`;
}

const GET = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

for (const process of [false, true]) {
  Deno.test(
    `bothSides${
      process ? " (a gateway process)" : ""
    }: each side answers on its ports, each logs in its prefix, and disposing stops both and removes their prefixes`,
    ON_LINUX,
    async () => {
      const prepared: string[] = [];
      await using both = await bothSides(conf(), {
        ports: 2,
        process,
        prepare: (prefix) => void prepared.push(prefix),
      });
      const sides = [both.nginx, both.gateway];
      deepStrictEqual(prepared, sides.map((s) => s.prefix));
      for (const side of sides) {
        deepStrictEqual(side.port, side.ports[0]);
        for (const port of side.ports) {
          match(await rawRequest(port, GET), new RegExp(`\r\n\r\n${port}\n$`));
        }
        match(await Deno.readTextFile(side.conf), /^daemon off;/);
        await waitFor(() => logLines(side.prefix, "access.log").length === 2);
      }
      // Disposed here to look at what is left; `using` then does nothing.
      await both[Symbol.asyncDispose]();
      // The prefixes only: a port freed here may be drawn at once by a
      // suite running beside this one, so whether it listens proves nothing.
      for (const side of sides) deepStrictEqual(exists(side.prefix), false);
    },
  );
}

Deno.test(
  "bothSides: a gateway that does not start stops nginx and removes both prefixes",
  ON_LINUX,
  async () => {
    const prepared: string[] = [];
    const ports: number[] = [];
    const broken = conf("gateway");
    await rejects(
      bothSides((port, side, all) => {
        ports.push(...all);
        return broken(port, side, all);
      }, { ports: 2, prepare: (prefix) => void prepared.push(prefix) }),
      /Cannot start/,
    );
    deepStrictEqual([prepared.length, ports.length], [2, 4]);
    for (const prefix of prepared) deepStrictEqual(exists(prefix), false);
  },
);
