/**
 * Station files run side by side: real nginx 1.22 and the gateway, each
 * from its own copy of the same corpus file (listen ports moved to free
 * loopback ports, upstream addresses to the test's upstream), compared on
 * the interface spec's requests: statuses, error-log and access-log lines
 * (time, pid#tid, *N and body bytes masked) and what the upstream received.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { nginxArgs, nginxBinary } from "../_nginx.ts";
import {
  freePort,
  maskAccessLine,
  maskErrorLine,
  onFreePort,
  portTaken,
  rawRequest,
  refusedPort,
  startUpstream,
  waitFor,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { editStation, type Station, station } from "./_station.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/** The valid corpus files the gateway runs from. */
const VALID = [
  "proxy_pass_no_uri",
  "stock",
  "upstream_backup",
  "timeouts_body",
  "includes",
  "quoting",
  "warn_only",
];

/**
 * The edit both copies get: the listen port, the upstream address, and
 * what Debian's nginx needs to run in the foreground with the logs nginx
 * for Windows has by default (both sides read these lines).
 */
function edit(port: number, upstream: number): (text: string) => string {
  return (text) => {
    let out = text.replace(/listen\s+[^;]+;/g, `listen 127.0.0.1:${port};`)
      .replace(/(127\.0\.0\.1|10\.20\.0\.5):80[89]0/g, `127.0.0.1:${upstream}`);
    if (!/^\s*http\s*\{/m.test(out)) return out;
    if (!/^\s*access_log/m.test(out)) {
      out = out.replace(
        /^(\s*http\s*\{)/m,
        "$1\n    access_log logs/access.log;",
      );
    }
    const errorLog = /^\s*error_log/m.test(out)
      ? ""
      : "error_log logs/error.log;\n";
    return `daemon off;\nmaster_process off;\n${errorLog}${out}`;
  };
}

async function startNginxFrom(s: Station): Promise<AsyncDisposable> {
  const child = new Deno.Command(await nginxBinary(), {
    args: nginxArgs({
      prefix: s.prefix,
      conf: s.conf,
      errorLog: `${s.prefix}/logs/stderr.log`,
      pid: s.pid,
    }),
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let exited = false;
  child.status.then(() => exited = true);
  // The pid file is written once nginx listens; a port taken ends it
  // (after its five bind() tries) with the reason on stderr.
  await waitFor(() => {
    try {
      return Deno.statSync(s.pid).isFile;
    } catch {
      return exited;
    }
  }, 10_000);
  if (exited) throw new Error(`nginx did not start: ${await stderr}`);
  return {
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
      await stderr;
    },
  };
}

function logLines(
  s: Station,
  names: string[],
): { errors: string[]; access: string[] } {
  const read = (name: string) => {
    try {
      return Deno.readTextFileSync(`${s.prefix}/logs/${name}`).split("\n")
        .filter((l) => l !== "");
    } catch {
      return [];
    }
  };
  return {
    errors: names.filter((n) => !/access/.test(n)).flatMap(read)
      .filter((l) => /\[(error|warn|crit|alert|emerg)\]/.test(l))
      .filter((l) => !/ is ignored| the gateway /.test(l))
      .map(maskErrorLine),
    access: names.filter((n) => /access/.test(n)).flatMap(read).map(
      maskAccessLine,
    ),
  };
}

// The Host header says :8081 on both sides, as on a station.
const HOST = "Host: localhost:8081\r\nReferer: http://localhost:8081/\r\n";

function post(path: string): string {
  return `POST ${path} HTTP/1.1\r\n${HOST}` +
    `Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
}

function get(path: string): string {
  return `GET ${path} HTTP/1.1\r\n${HOST}Accept: text/html\r\nConnection: close\r\n\r\n`;
}

/** The interface spec's two requests, then the client app and a missing file. */
const REQUESTS = [
  post("/api/loginms"),
  post("/api/Home31/UpDateTitle"),
  get("/"),
  // An app route: the gateway's SPA fallback differs from try_files for
  // asset-like paths (a named warning of the mapping), not for these.
  get("/no/such/page"),
];

function status(raw: string): string {
  return raw.slice(9, 12);
}

/** A station with the client app's files ("my html" is the quoting case's root). */
function withApp(s: Station): Station {
  for (const root of ["html", "my html"]) {
    Deno.mkdirSync(`${s.prefix}/${root}`, { recursive: true });
    Deno.writeTextFileSync(`${s.prefix}/${root}/index.html`, "<p>app</p>");
    Deno.writeTextFileSync(`${s.prefix}/${root}/50x.html`, "<p>down</p>");
  }
  return s;
}

/** A gateway's station written ahead, on the ports drawn then. */
interface EarlyStation {
  s: Station;
  port: number;
  refused: number;
}

/**
 * The gateway's station of each refused-upstream case, written when the
 * file loads: a client-app folder written a moment ago is served only once
 * it has settled (README, settle: about a second where the settled path
 * check is the witness, as under the gate's permissions), so the file waits
 * for that once, not once a case. A port taken since it was drawn gives a
 * fresh station on another port, which waits. A case removes the station it
 * took; the ones no case took (a filtered run) are removed when the process
 * ends.
 */
const EARLY = new Map<string, EarlyStation>(VALID.map((name) => {
  const port = freePort();
  const refused = refusedPort();
  return [name, {
    s: withApp(station(name, edit(port, refused))),
    port,
    refused,
  }];
}));
globalThis.addEventListener("unload", () => {
  for (const { s } of [...EARLY.values(), ...FORWARD_EARLY.values()]) {
    try {
      Deno.removeSync(s.prefix, { recursive: true });
    } catch {
      // removed already
    }
  }
});

/** Runs both from copies of a corpus file; returns each side's observations. */
async function sideBySide(
  name: string,
  upstream: number,
  requests: readonly string[] = REQUESTS,
  early?: EarlyStation,
) {
  await using stations = new AsyncDisposableStack();
  if (early !== undefined) stations.use(early.s);
  /**
   * A fresh station on a port and `start` on it: a port taken since it
   * was drawn gives another station on another port (onFreePort()).
   */
  const startOn = <T extends AsyncDisposable>(
    start: (s: Station) => Promise<T>,
  ) =>
    onFreePort(async (port) => {
      const s = withApp(station(name, edit(port, upstream)));
      try {
        return { s, port, running: await start(s) };
      } catch (error) {
        await s[Symbol.asyncDispose]();
        throw error;
      }
    }).then((started) => {
      stations.use(started.s);
      return started;
    });
  const logs = [
    "error.log",
    "access.log",
    "gateway-error.log",
    "gateway-access.log",
    "err\\ or.log",
  ];
  const heads: string[][] = [];
  const run = async (port: number) => {
    const out = [];
    const locations = [];
    for (const request of requests) {
      const raw = await rawRequest(port, request, 5000);
      out.push(status(raw));
      locations.push(
        (raw.match(/^location: (.*)\r$/im)?.[1] ?? "").replace(
          `:${port}/`,
          ":PORT/",
        ),
      );
    }
    heads.push(locations);
    return out;
  };
  let nginxStatuses;
  const { s: n, port: nginxPort, running: nginx } = await startOn(
    startNginxFrom,
  );
  {
    await using _nginx = nginx;
    nginxStatuses = await run(nginxPort);
    await waitFor(
      () => logLines(n, logs).access.length >= requests.length,
      5000,
    );
  }
  let gatewayStatuses;
  const startGateway = (s: Station) => startMain(["--nginx-conf", s.conf]);
  const { s: g, port: gatewayPort, running: gateway } = early === undefined
    ? await startOn(startGateway)
    : await startGateway(early.s).then(
      (running) => ({ ...early, running }),
      (error) => {
        // Its port was taken since the file loaded: a fresh station.
        if (!portTaken(error)) throw error;
        return startOn(startGateway);
      },
    );
  {
    await using _gateway = gateway;
    gatewayStatuses = await run(gatewayPort);
    await waitFor(
      () => logLines(g, logs).access.length >= requests.length,
      5000,
    );
  }
  const mask = (lines: string[], prefix: string, port: number) =>
    lines.map((l) =>
      l.replaceAll(prefix, "PREFIX").replaceAll(`:${port}`, ":PORT")
    );
  const nl = logLines(n, logs);
  const gl = logLines(g, logs);
  return {
    nginx: {
      statuses: nginxStatuses,
      errors: mask(nl.errors, n.prefix, nginxPort),
      access: nl.access,
      locations: heads[0]!,
    },
    gateway: {
      statuses: gatewayStatuses,
      errors: mask(gl.errors, g.prefix, gatewayPort),
      access: gl.access,
      locations: heads[1]!,
    },
  };
}

for (const name of VALID) {
  Deno.test(
    `compat ${name}: refused upstream, nginx and the gateway from one file`,
    ON_LINUX,
    async () => {
      const early = EARLY.get(name);
      EARLY.delete(name);
      const { nginx, gateway } = await sideBySide(
        name,
        early?.refused ?? refusedPort(),
        REQUESTS,
        early,
      );
      deepStrictEqual(nginx.statuses.slice(0, 2), ["502", "502"]);
      // Both connect() failures are logged, and every request.
      strictEqual(
        nginx.errors.filter((l) => l.includes("connect() failed")).length >=
          2,
        true,
      );
      strictEqual(nginx.access.length, REQUESTS.length);
      deepStrictEqual(gateway.statuses, nginx.statuses);
      // Line for line, "no live upstreams" included: with a primary and a
      // backup both refused, nginx's second request finds the backup still
      // down and logs it, and so does the gateway.
      deepStrictEqual(gateway.errors, nginx.errors);
      deepStrictEqual(gateway.access, nginx.access);
    },
  );
}

/** Per file: the requests, and the targets the upstream must see. */
const FORWARDED: [string, string[], string[]][] = [
  ["stock", ["/api/loginms", "/api/Home31/UpDateTitle?a=1&b=%20"], [
    "/loginms",
    "/Home31/UpDateTitle?a=1&b=%20",
  ]],
  // proxy_pass without a URI part: the path goes up as it came.
  [
    "proxy_pass_no_uri",
    ["/api/loginms", "/api/x/../Home31//UpDateTitle?a=%20"],
    [
      "/api/loginms",
      "/api/x/../Home31//UpDateTitle?a=%20",
    ],
  ],
  // Another location than /api/, its prefix replaced by "/".
  ["other_prefix", ["/backend/loginms", "/backend/Home31/UpDateTitle"], [
    "/loginms",
    "/Home31/UpDateTitle",
  ]],
];

/**
 * The gateway's station of each forwarding case, written when the file
 * loads as {@linkcode EARLY}'s: its conf names the upstream a test starts,
 * so the test writes the conf again in place (`editStation`), which leaves
 * the client-app folder settled.
 */
const FORWARD_EARLY = new Map<string, EarlyStation>(
  FORWARDED.map(([name]) => {
    const port = freePort();
    return [name, {
      s: withApp(station(name, edit(port, 0))),
      port,
      refused: 0,
    }];
  }),
);

for (const [name, paths, targets] of FORWARDED) {
  Deno.test(
    `compat ${name}: the upstream receives the same requests from both, and Location is rewritten alike`,
    ON_LINUX,
    async () => {
      // A redirect back into the upstream's own space, as a login does.
      await using up = startUpstream((req) =>
        new Response(null, {
          status: 302,
          headers: {
            location: `http://127.0.0.1:${up.port}${req.target}/next`,
          },
        })
      );
      const early = FORWARD_EARLY.get(name);
      FORWARD_EARLY.delete(name);
      if (early !== undefined) {
        editStation(early.s, name, edit(early.port, up.port));
      }
      const { nginx, gateway } = await sideBySide(name, up.port, [
        ...paths.map(post),
        get("/"),
      ], early);
      deepStrictEqual(nginx.statuses, ["302", "302", "200"]);
      deepStrictEqual(gateway.statuses, nginx.statuses);
      deepStrictEqual(gateway.locations, nginx.locations);
      strictEqual(
        nginx.locations[0]!.startsWith("http://localhost:PORT/"),
        true,
      );
      deepStrictEqual(gateway.access, nginx.access);
      const seen = up.seen.map((r) => ({
        method: r.method,
        target: r.target,
        host: r.headers.get("host"),
        type: r.headers.get("content-type"),
        length: r.headers.get("content-length"),
        referer: r.headers.get("referer"),
        body: new TextDecoder().decode(r.body),
      }));
      deepStrictEqual(seen.map((s) => s.target), [...targets, ...targets]);
      deepStrictEqual(seen.slice(2), seen.slice(0, 2));
    },
  );
}
