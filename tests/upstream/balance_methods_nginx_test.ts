/**
 * `hash KEY`, `hash KEY consistent` and `least_conn` beside a real nginx
 * 1.22 on the same nginx.conf and the same upstream servers: a table of keys
 * reaches the same servers (weights, a `down` server, a refused one that
 * fails and makes the hash go on), and a sequence of requests held open
 * and released reaches the same servers as nginx counts them. Requests are
 * held by the upstream until the test releases them: each step waits on
 * the request's arrival, never on time.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import {
  rawRequest,
  readHead,
  refusedPort,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import {
  buildAhead,
  compareFile,
  TESTDATA,
} from "../nginx_conf/_corpus/mod.ts";
import { join } from "node:path";

const ON_LINUX = suiteNeeds("upstream/balance_methods_nginx_test.ts", [
  "nginx",
]);

/** The corpus case run beside nginx, its gateway station built now. */
const LEAST_CONN = join(TESTDATA, "unseen5", "least_conn_keepalive");
if (!ON_LINUX.ignore) buildAhead([LEAST_CONN]);

/** A request the upstream holds, until released. */
interface Arrival {
  server: string;
  path: string;
  release(): void;
}

/** Upstream servers named `a`… that answer with their name, or hold. */
class Servers {
  readonly arrivals: Arrival[] = [];
  readonly ups;
  #wake = Promise.withResolvers<void>();

  constructor(names: string[]) {
    this.ups = names.map((name) =>
      startRawUpstream(async (conn, _i, up) => {
        const head = await readHead(conn);
        if (head === null) return;
        const path = head.split(" ")[1]!;
        if (path.includes("/hold")) {
          const released = Promise.withResolvers<void>();
          this.arrivals.push({
            server: name,
            path,
            release: released.resolve,
          });
          this.#wake.resolve();
          this.#wake = Promise.withResolvers();
          await Promise.race([released.promise, up.disposed]);
        }
        await writeText(
          conn,
          `HTTP/1.1 200 OK\r\nContent-Length: ${name.length}\r\nConnection: close\r\n\r\n${name}`,
        );
      })
    );
  }

  /** The arrival of a path, once it has arrived (bounded: 10 s). */
  async arrived(path: string): Promise<Arrival> {
    const end = Date.now() + 10_000;
    while (Date.now() < end) {
      const found = this.arrivals.find((a) => a.path === path);
      if (found) return found;
      const timer = Promise.withResolvers<void>();
      const id = setTimeout(timer.resolve, end - Date.now());
      await Promise.race([this.#wake.promise, timer.promise]);
      clearTimeout(id);
    }
    throw new Error(`Cannot see ${path} arrive upstream within 10 s`);
  }

  async [Symbol.asyncDispose]() {
    for (const up of this.ups) await up[Symbol.asyncDispose]();
  }
}

/** The `upstream:` field of each error line (the server tried, the path). */
function failedTries(prefix: string, side: string): string[] {
  return logLines(prefix, "error.log").filter((l) => l.includes("[error]"))
    .map((l) =>
      l.match(/upstream: "([^"]+)"/)?.[1]?.replace(side, "SIDE") ?? l
    );
}

const GET = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;

/** Which server answered: its name is the body. */
function answeredBy(raw: string): string {
  strictEqual(raw.startsWith("HTTP/1.1 200"), true, raw);
  return raw.slice(raw.indexOf("\r\n\r\n") + 4);
}

function conf(servers: Servers, dead: number, dead2 = refusedPort()) {
  const [a, b, c, d, e] = servers.ups.map((u) => `127.0.0.1:${u.port}`);
  const members = `server ${a}; server ${b} weight=2; server ${c};
    server ${d} down; server 127.0.0.1:${dead} fail_timeout=60s;`;
  return (port: number) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  upstream hashed { hash $arg_k; ${members} }
  upstream ketama { hash $arg_k consistent; ${members} }
  upstream fewest { least_conn; server ${a}; server ${b} weight=2;
    server ${c}; server 127.0.0.1:${dead} fail_timeout=60s;
    server ${e} backup; }
  upstream allgone { least_conn; server 127.0.0.1:${dead};
    server 127.0.0.1:${dead2}; server ${d} down; }
  upstream rrgone { server 127.0.0.1:${dead}; server 127.0.0.1:${dead2};
    server ${d} down; }
  server {
    listen 127.0.0.1:${port};
    location /h/ { proxy_pass http://hashed; }
    location /c/ { proxy_pass http://ketama; }
    location /l/ { proxy_pass http://fewest; }
    location /g/ { proxy_pass http://allgone; }
    location /rg/ { proxy_pass http://rrgone; }
  }
}
`;
}

const KEYS = [
  "",
  ...Array.from({ length: 40 }, (_, i) => `user${i}`),
  "/api/orders/12345",
  "station-07",
  "a.b_c-d",
];

Deno.test(
  "nginx parity: hash and hash consistent send each key to nginx's server",
  ON_LINUX,
  async () => {
    await using servers = new Servers(["a", "b", "c", "d", "e"]);
    await using sides = await bothSides(conf(servers, refusedPort()));
    const run = async (port: number) => {
      const got: string[] = [];
      for (const prefix of ["/h/", "/c/"]) {
        for (const key of KEYS) {
          got.push(
            answeredBy(await rawRequest(port, GET(`${prefix}?k=${key}`))),
          );
        }
      }
      return got;
    };
    const nginx = await run(sides.nginx.port);
    const gateway = await run(sides.gateway.port);
    // Every live server is reached, and never the `down` one.
    deepStrictEqual(new Set(nginx), new Set(["a", "b", "c"]));
    deepStrictEqual(gateway, nginx);
    // The refused server was tried once by each method, then skipped.
    const tried = failedTries(sides.nginx.prefix, "nginx");
    deepStrictEqual(tried.length, 2, tried.join("\n"));
    deepStrictEqual(failedTries(sides.gateway.prefix, "gateway"), tried);
  },
);

Deno.test(
  "nginx parity: least_conn sends each request where nginx does while others are held open",
  ON_LINUX,
  async () => {
    await using servers = new Servers(["a", "b", "c", "d", "e"]);
    await using sides = await bothSides(conf(servers, refusedPort()));
    /** `hN` holds request N open, `qN` asks and waits, `rN` releases N. */
    const script = [
      "h1",
      "h2",
      "h3",
      "q1",
      "h4",
      "r2",
      "q2",
      "q3",
      "h5",
      "h6",
      "r1",
      "r3",
      "q4",
      "q5",
      "h7",
      "r4",
      "r5",
      "r6",
      "r7",
      "q6",
      "q7",
      "q8",
    ];
    const run = async (side: "nginx" | "gateway") => {
      const port = sides[side].port;
      const held = new Map<string, Promise<string>>();
      const got: string[] = [];
      for (const step of script) {
        const n = step.slice(1);
        if (step[0] === "q") {
          got.push(
            `${step}:${
              answeredBy(await rawRequest(port, GET(`/l/${side}/q${n}`)))
            }`,
          );
        } else if (step[0] === "h") {
          const path = `/l/${side}/hold${n}`;
          held.set(n, rawRequest(port, GET(path)));
          got.push(`${step}:${(await servers.arrived(path)).server}`);
        } else {
          (await servers.arrived(`/l/${side}/hold${n}`)).release();
          // The answer read whole: nginx has freed the server by then.
          got.push(`${step}:${answeredBy(await held.get(n)!)}`);
        }
      }
      return got;
    };
    const nginx = await run("nginx");
    const gateway = await run("gateway");
    deepStrictEqual(gateway, nginx);
    // The refused server was tried once, its request went on to the next.
    const tried = failedTries(sides.nginx.prefix, "nginx");
    deepStrictEqual(tried.length, 1, tried.join("\n"));
    deepStrictEqual(failedTries(sides.gateway.prefix, "gateway"), tried);
  },
);

Deno.test(
  "corpus least_conn_keepalive: a least_conn trio runs beside nginx from the same file",
  ON_LINUX,
  async () => {
    // A station file nginx accepts (unseen5, README there): every probe
    // reaches the same one of the three servers on both sides.
    const row = await compareFile(LEAST_CONN);
    deepStrictEqual(
      { agree: row.verdictsAgree, runs: row.runs, differences: row.all },
      { agree: true, runs: true, differences: [] },
      row.first,
    );
    // The trio was used: more than one server answered a probe.
    const reached = new Set(
      row.nginxAnswers.flatMap((a) => a.match(/→ upstream \d/g) ?? []),
    );
    strictEqual(reached.size > 1, true, [...reached].join(", "));
  },
);

Deno.test(
  "nginx parity: least_conn and round-robin with every live server failing, a down one beside them",
  ON_LINUX,
  async () => {
    // nginx's tries count the servers that are not `down`: once both
    // refused, the request ends with the last failure, and the next one
    // finds none available, says "no live upstreams" and forgets the
    // failures (ngx_http_upstream_get_least_conn_peer).
    await using servers = new Servers(["a", "b", "c", "d", "e"]);
    await using sides = await bothSides(conf(servers, refusedPort()));
    for (const side of ["nginx", "gateway"] as const) {
      for (const group of ["g", "rg"]) {
        for (const n of [1, 2, 3]) {
          await rawRequest(sides[side].port, GET(`/${group}/${side}/r${n}`));
        }
      }
    }
    const lines = (side: "nginx" | "gateway") =>
      logLines(sides[side].prefix, "error.log")
        .filter((l) => l.includes("[error]"))
        .map((l) =>
          `${l.includes("no live upstreams") ? "no live" : "failed"} ${
            l.match(/upstream: "([^"]+)"/)?.[1]?.replace(side, "SIDE")
          }`
        );
    deepStrictEqual(lines("nginx").filter((l) => l.includes("/r1")).length, 4);
    deepStrictEqual(lines("gateway"), lines("nginx"));
  },
);
