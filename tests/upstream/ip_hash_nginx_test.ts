/**
 * `ip_hash` beside nginx 1.22 running the same nginx.conf: clients of
 * sixteen /24 networks (loopback source addresses, `curl --interface`)
 * reach the same servers of a weighted group as with nginx, and a group
 * with a refused server moves each client on to the server nginx's hash
 * goes on to, skipping the failed one afterwards, with nginx's lines.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  refusedPort,
  startUpstream,
  type TestUpstream,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const ON_LINUX = suiteNeeds("upstream/ip_hash_nginx_test.ts", ["nginx"]);

function conf(port: number, up: number[], refused: number): string {
  const [a, b, c] = up;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log off;
  upstream weighted {
    ip_hash;
    server 127.0.0.1:${a};
    server 127.0.0.1:${b} weight=3;
    server 127.0.0.1:${c};
  }
  upstream failing {
    ip_hash;
    server 127.0.0.1:${a};
    server 127.0.0.1:${refused} fail_timeout=60s;
    server 127.0.0.1:${c};
  }
  server {
    listen 127.0.0.1:${port};
    location /w { proxy_pass http://weighted; }
    location /f { proxy_pass http://failing; }
  }
}
`;
}

/** The clients: one address in each of sixteen /24 networks. */
const CLIENTS = Array.from({ length: 16 }, (_, i) => `127.0.${i * 7}.9`);

/** The server's name, as a client from `source` got it. */
async function fetchFrom(source: string, url: string): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: ["-s", "--max-time", "10", "--interface", source, url],
  }).output();
  return new TextDecoder().decode(out.stdout);
}

function upstreams(): TestUpstream[] {
  return ["s1", "s2", "s3"].map((name) =>
    startUpstream(() => new Response(name))
  );
}

Deno.test(
  "ip_hash: each client reaches the server nginx 1.22 chooses, also past a refused one",
  ON_LINUX,
  async () => {
    const theirUps = upstreams();
    const ourUps = upstreams();
    try {
      const refused = refusedPort();
      await using both = await bothSides((port, side) =>
        conf(
          port,
          (side === "nginx" ? theirUps : ourUps).map((u) => u.port),
          refused,
        )
      );
      const { nginx: theirs, gateway: ours } = both;
      const answers = async (port: number) => {
        const got: string[] = [];
        for (const path of ["/w", "/f", "/w", "/f"]) {
          for (const client of CLIENTS) {
            got.push(
              `${client} ${path} ${await fetchFrom(
                client,
                `http://127.0.0.1:${port}${path}`,
              )}`,
            );
          }
        }
        return got;
      };
      const nginxAnswers = await answers(theirs.port);
      deepStrictEqual(await answers(ours.port), nginxAnswers);
      // The weighted group spreads the sixteen networks over all three.
      deepStrictEqual(
        new Set(
          nginxAnswers.filter((l) => l.includes(" /w ")).map((l) =>
            l.slice(-2)
          ),
        ).size,
        3,
      );
      const errors = (prefix: string, port: number) =>
        logLines(prefix, "error.log").map(maskErrorLine).map((l) =>
          l.replaceAll(`:${port}`, ":P")
        );
      const nginxErrors = errors(theirs.prefix, theirs.port);
      deepStrictEqual(errors(ours.prefix, ours.port), nginxErrors);
      // One refusal: the server is failed for the rest of the run.
      deepStrictEqual(nginxErrors.length, 1);
    } finally {
      for (const u of [...theirUps, ...ourUps]) await u[Symbol.asyncDispose]();
    }
  },
);
