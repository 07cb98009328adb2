/**
 * `geo` blocks beside nginx 1.22: the same file run by both answers each
 * request with the same values (networks, ranges, a source variable,
 * `proxy` and `X-Forwarded-For`), and `--check` says what `nginx -t` says
 * about each faulty block.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { nginxTestOutput, startNginxServer } from "../_nginx.ts";
import { freePort, rawRequest } from "../_utils.ts";
import { runStartup, startMain } from "../_in_process.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/** The blocks; `$NETS` is a file of networks the last one includes. */
const GEO = `
  geo $g {
    default def;
    127.0.0.1 one;
    10.0.0.0/8 ten;
    10.1.0.0/16 tenone;
    192.168.0.0/16 v$host;
    delete 10.1.0.0/16;
    proxy 127.0.0.0/8;
  }
  geo $arg_ip $h {
    ranges;
    default none;
    10.0.0.0-10.0.0.255 a;
    10.0.0.50-10.0.0.60 c;
  }
  geo $arg_ip $k {
    default kd;
    10.0.0.0/8 k10;
    255.0.0.0/8 high;
    ::1 six;
    2001:db8::/32 doc;
  }
  geo $arg_ip $r {
    proxy 10.0.0.0/8;
    proxy_recursive;
    default rd;
    8.8.8.8 google;
  }
  geo $i {
    default id;
    include $NETS;
  }`;

const SERVER = `location / { return 200 "g=$g h=$h k=$k r=$r i=$i\\n"; }`;

/** `[target, X-Forwarded-For]` pairs. */
const REQUESTS: [string, string][] = [
  ["/", ""],
  ["/?ip=10.0.0.5", ""],
  ["/?ip=10.0.0.55", ""],
  ["/?ip=10.0.1.5", ""],
  ["/?ip=junk", ""],
  ["/?ip=::1", ""],
  ["/?ip=2001:db8::5", ""],
  ["/?ip=::ffff:10.0.0.7", ""],
  ["/?ip=10.0.0.5:80", ""],
  ["/", "10.1.2.3"],
  ["/", "192.168.1.1"],
  ["/", "8.8.8.8, 127.0.0.5"],
  ["/", "junk"],
  ["/?ip=10.0.0.1", "8.8.8.8, 10.0.0.9"],
  ["/?ip=10.0.0.1", "1.1.1.1, 8.8.8.8"],
];

async function body(port: number, target: string, xff: string) {
  const raw = await rawRequest(
    port,
    `GET ${target} HTTP/1.1\r\nHost: localhost\r\n` +
      (xff === "" ? "" : `X-Forwarded-For: ${xff}\r\n`) +
      "Connection: close\r\n\r\n",
  );
  return `${target} [${xff}]: ${raw.split("\r\n\r\n")[1] ?? ""}`;
}

Deno.test(
  "geo variables have nginx 1.22's values, request by request",
  ON_LINUX,
  async () => {
    const prefix = await Deno.makeTempDir({ prefix: "geo-gw-" });
    try {
      const nets = join(prefix, "nets.conf");
      await Deno.writeTextFile(nets, "127.0.0.1 local;\n10.0.0.0/8 lan;\n");
      const http = GEO.replace("$NETS", nets);
      await using nginx = await startNginxServer({ http, server: SERVER });
      const port = freePort();
      await Deno.mkdir(join(prefix, "logs"));
      await Deno.mkdir(join(prefix, "conf"), { recursive: true });
      const conf = join(prefix, "conf", "nginx.conf");
      await Deno.writeTextFile(
        conf,
        `events {}\nhttp {\n error_log ${prefix}/logs/error.log;\n access_log off;\n${http}\n server {\n listen 127.0.0.1:${port};\n ${SERVER}\n }\n}\n`,
      );
      await using gw = await startMain(["--nginx-conf", conf]);
      const want: string[] = [];
      const got: string[] = [];
      for (const [target, xff] of REQUESTS) {
        want.push(await body(nginx.port, target, xff));
        got.push(await body(gw.port, target, xff));
      }
      deepStrictEqual(got, want);
    } finally {
      await Deno.remove(prefix, { recursive: true });
    }
  },
);

/** Faulty or doubtful blocks: nginx -t's `[emerg]`/`[warn]` for each. */
const FAULTS = [
  "geo $v { 10.1.0.0/16 a; 10.1.0.0/16 b; }",
  "geo $v { delete 10.9.0.0/16; }",
  "geo $v { 10.1.2.3/8 x; }",
  "geo $v { junk x; }",
  "geo $v { 10.0.0.0/8 a b; }",
  "geo $v { default; }",
  "geo $v { proxy junk; }",
  "geo $v { 10.0.0.0/8 a; ranges; }",
  "geo $v { ranges; 10.4.0.0/16 x; }",
  "geo $v { ranges; 10.0.0.50-10.0.0.60 c; 10.0.0.0-10.0.0.255 a; }",
  "geo $v { ranges; 10.0.3.0-10.0.3.255 y; delete 10.0.3.10-10.0.3.20; }",
  "geo v { }",
  "geo $a $b $c { }",
  "geo a $b { }",
];

/** The geo lines of a check's output, without the program's name. */
function geoLines(text: string): string[] {
  return text.split("\n")
    .filter((l) => /\[(emerg|warn)\] .* in \S+:\d+$/.test(l))
    .filter((l) => !/"events"|"pid"/.test(l))
    .map((l) => l.replace(/^[^:]+: /, ""));
}

Deno.test(
  "--check says what nginx -t says about each geo block",
  ON_LINUX,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "geo-check-" });
    try {
      await Deno.mkdir(join(dir, "conf"));
      for (const [i, block] of FAULTS.entries()) {
        const conf = join(dir, "conf", `geo${i}.conf`);
        await Deno.writeTextFile(
          conf,
          `events {}\nhttp {\n  ${block}\n  server { listen 127.0.0.1:${freePort()}; }\n}\n`,
        );
        const nginx = await nginxTestOutput({
          prefix: dir,
          conf,
          errorLog: join(dir, "error.log"),
        });
        const gw = await runStartup(["--check", "--nginx-conf", conf]);
        deepStrictEqual(
          geoLines(gw.stderr + gw.stdout),
          geoLines(nginx),
          block,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
