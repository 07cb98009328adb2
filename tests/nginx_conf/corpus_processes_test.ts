/**
 * The corpus harness's nginx is ready only when the ports that answer are
 * its own: one another process holds answers too, and the probes sent to it
 * went on to that process's upstreams, among another test's records.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { startNginx } from "./_corpus/processes.ts";
import { buildStation } from "./_corpus/station.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("nginx_conf/corpus_processes_test.ts", ["nginx"]);

Deno.test(
  "startNginx() is not ready on a port another process holds",
  NEEDS,
  async () => {
    const caseDir = await Deno.makeTempDir({ prefix: "corpus-processes-" });
    try {
      await Deno.writeTextFile(
        join(caseDir, "nginx.conf"),
        "events {}\nhttp {\n    server { listen {{LISTEN}}; }\n}\n",
      );
      using holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = holder.addr.port;
      await using station = buildStation(caseDir, {
        listen: [port],
        upstream: [],
      }, { nginx: true });
      await using nginx = await startNginx(station, [port]);
      deepStrictEqual(
        {
          ready: nginx.ready,
          taken: /Address already in use/.test(nginx.output()),
        },
        { ready: false, taken: true },
      );
    } finally {
      await Deno.remove(caseDir, { recursive: true });
    }
  },
);
