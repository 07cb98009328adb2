/**
 * `listen`s on one address and port beside nginx 1.22's `nginx -t`: one
 * server listening twice on it (however the address is written:
 * `localhost`, `*`, a bare port) is `a duplicate listen`, two sockets'
 * tuning parameters on it `duplicate listen options`, two
 * `default_server`s `a duplicate default server`, each at the second
 * `listen`'s line; servers sharing it otherwise, and one server on two
 * addresses of one port, pass.
 */
import { deepStrictEqual } from "node:assert/strict";
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("nginx_conf/listen_duplicates_nginx_test.ts", [
  "nginx",
]);

/** Each row: the servers, one `listen` per line (`|` ends a server). */
const ROWS: string[] = [
  "127.0.0.1:8801; 127.0.0.1:8801",
  "127.0.0.1:8801; 127.0.0.1:8802; 127.0.0.1:8801",
  "127.0.0.1:8801; localhost:8801",
  "8801; *:8801",
  "8801; 0.0.0.0:8801",
  "[::1]:8801; [0::1]:8801",
  // An IPv4 address in fewer parts, hex or octal, as getaddrinfo reads it.
  "127.0.0.1:8801; 127.1:8801",
  "127.0.0.1:8801; 2130706433:8801",
  "127.0.0.1:8801; 0x7f.1:8801",
  "127.0.0.1:8801; 127.0.1:8801",
  "127.0.0.1:8801; 127.000.000.001:8801",
  "127.0.0.1:8801 default_server; 127.0.0.1:8801",
  "127.0.0.1:8801; 127.0.0.1:8801 backlog=10",
  "127.0.0.1:8801 | 127.0.0.1:8801; 127.0.0.1:8801",
  "127.0.0.1:8801 default_server | 127.0.0.1:8801 default_server",
  "127.0.0.1:8801 default | 127.0.0.1:8801 default_server",
  "127.0.0.1:8801 backlog=10 | 127.0.0.1:8801 backlog=20",
  "127.0.0.1:8801 reuseport | 127.0.0.1:8801 reuseport default_server",
  "127.0.0.1:8801 default_server | 127.0.0.1:8801 backlog=5 default_server",
  // Accepted.
  "127.0.0.1:8801 | 127.0.0.1:8801",
  "8801; 127.0.0.1:8801",
  "127.0.0.1:8801; [::1]:8801",
  "127.0.0.1:8801 reuseport | 127.0.0.1:8801",
  "127.0.0.1:8801 default_server | 127.0.0.1:8801 backlog=5",
  "127.0.0.1:8801 default_server | 127.0.0.2:8801 default_server",
];

/** The row's nginx.conf: each `listen` on a line of its own. */
function confOf(row: string): string {
  const servers = row.split(" | ").map((server, i) =>
    `  server {\n    server_name s${i};\n${
      server.split("; ").map((l) => `    listen ${l};\n`).join("")
    }  }\n`
  );
  return `events {}\nhttp {\n  access_log off;\n${servers.join("")}}\n`;
}

/** nginx's `[emerg]` text and line, without its time and pid; `""` for none. */
function emergOf(stderr: string): string {
  const m = /\[emerg\] (?:\d+#\d+: )?(.*?)(?: in \/\S+:(\d+))?$/m.exec(stderr);
  return m === null ? "" : `${m[1]} :${m[2]}`;
}

/** The gateway's first refusal of a file and its line; `""` for none. */
function ours(conf: string): string {
  const result = loadNginxConf(conf);
  if (result.ok) return "";
  const m = / in \/\S+?(?::(\d+))?$/.exec(result.message);
  return m === null
    ? result.message
    : `${result.message.slice(0, m.index)} :${m[1]}`;
}

Deno.test(
  "listen addresses nginx 1.22 refuses as duplicates (one server twice, two servers' options, two default servers) are refused with its words and line",
  NEEDS,
  async () => {
    await using p = await nginxPrefix("", {
      name: "listen-duplicates-",
      dirs: ["logs"],
    });
    const theirs: string[] = [];
    const mine: string[] = [];
    for (const row of ROWS) {
      await Deno.writeTextFile(p.conf, confOf(row));
      theirs.push(
        `${row} => ${
          emergOf(await nginxTestOutput({ prefix: p.prefix, conf: p.conf }))
        }`,
      );
      mine.push(`${row} => ${ours(p.conf)}`);
    }
    deepStrictEqual(mine, theirs);
  },
);
