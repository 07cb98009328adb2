/**
 * `least_conn` over `fastcgi_pass` beside nginx 1.22 on the same
 * nginx.conf and the same FastCGI servers, a refused one listed first: a
 * request whose first try is refused and whose second is held open counts
 * against the server it holds until its own answer ends, whenever the
 * refused try's connection ends (one call carries every try of a
 * request; `UpstreamCall.tryIndex`). A sequence of requests held open and
 * released reaches the servers nginx chooses. Each step waits on the
 * request's arrival at its server, never on time.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { rawRequest, refusedPort } from "../_utils.ts";
import {
  type FastcgiResponder,
  type FastcgiSeen,
  startFastcgiResponder,
} from "../_fastcgi_responder.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("fastcgi/fastcgi_least_conn_nginx_test.ts", [
  "nginx",
]);

/** A request a server holds, until released. */
interface Arrival {
  server: string;
  path: string;
  release(): void;
}

/** FastCGI servers named `a`… that answer with their name, or hold. */
class Servers {
  readonly arrivals: Arrival[] = [];
  readonly all: FastcgiResponder[];
  #wake = Promise.withResolvers<void>();

  constructor(names: string[]) {
    this.all = names.map((name) =>
      startFastcgiResponder({
        plain: name,
        hold: (seen) => this.#hold(name, seen),
      })
    );
  }

  #hold(server: string, seen: FastcgiSeen): Promise<void> | undefined {
    const path = seen.params.find(([n]) => n === "DOCUMENT_URI")?.[1] ?? "";
    if (!path.includes("/hold")) {
      this.arrivals.push({ server, path, release: () => {} });
      this.#wake.resolve();
      this.#wake = Promise.withResolvers();
      return undefined;
    }
    const released = Promise.withResolvers<void>();
    this.arrivals.push({ server, path, release: released.resolve });
    this.#wake.resolve();
    this.#wake = Promise.withResolvers();
    return released.promise;
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
    throw new Error(`Cannot see ${path} arrive at a server within 10 s`);
  }

  async [Symbol.asyncDispose]() {
    for (const a of this.arrivals) a.release();
    for (const server of this.all) await server[Symbol.asyncDispose]();
  }
}

function conf(servers: Servers, dead: number) {
  const [a, b, c] = servers.all.map((s) => `127.0.0.1:${s.port}`);
  return (port: number) =>
    `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  upstream php { least_conn; server 127.0.0.1:${dead} fail_timeout=60s;
    server ${a}; server ${b}; server ${c}; }
  server {
    listen 127.0.0.1:${port};
    location / { fastcgi_pass php; fastcgi_param DOCUMENT_URI $document_uri; }
  }
}
`;
}

const GET = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;

/** Which server answered: its name is the body (chunked: one chunk). */
function answeredBy(raw: string): string {
  strictEqual(raw.startsWith("HTTP/1.1 200"), true, raw);
  const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  const chunk = /^[0-9a-f]+\r\n(.*?)\r\n0\r\n\r\n$/s.exec(body);
  return chunk === null ? body : chunk[1]!;
}

Deno.test(
  "nginx parity: least_conn over fastcgi_pass, a refused server first, sends each request where nginx does while others are held open",
  NEEDS,
  async () => {
    await using servers = new Servers(["a", "b", "c"]);
    await using sides = await bothSides(conf(servers, refusedPort()));
    /** `hN` holds request N open, `qN` asks and waits, `rN` releases N. */
    const script = [
      "h1",
      "h2",
      "q1",
      "h3",
      "q2",
      "r2",
      "q3",
      "h4",
      "q4",
      "r1",
      "r3",
      "q5",
      "r4",
      "q6",
      "q7",
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
              answeredBy(await rawRequest(port, GET(`/${side}/q${n}`)))
            }`,
          );
        } else if (step[0] === "h") {
          const path = `/${side}/hold${n}`;
          held.set(n, rawRequest(port, GET(path)));
          got.push(`${step}:${(await servers.arrived(path)).server}`);
        } else {
          (await servers.arrived(`/${side}/hold${n}`)).release();
          // The answer read whole: nginx has freed the server by then.
          got.push(`${step}:${answeredBy(await held.get(n)!)}`);
        }
      }
      return got;
    };
    const nginx = await run("nginx");
    const gateway = await run("gateway");
    deepStrictEqual(gateway, nginx);
    // The refused server was tried once on each side, by the first request.
    const refused = (side: "nginx" | "gateway") =>
      logLines(sides[side].prefix, "error.log").filter((l) =>
        l.includes("[error]")
      ).map((l) => l.match(/request: "([^"]+)"/)?.[1]?.replace(side, "SIDE"));
    deepStrictEqual(refused("nginx"), ["GET /SIDE/hold1 HTTP/1.1"]);
    deepStrictEqual(refused("gateway"), refused("nginx"));
  },
);
