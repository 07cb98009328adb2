/**
 * `deno task bench`: the gateway beside nginx and Caddy under wrk, on
 * loopback only, with bounded run times.
 *
 * Installs nginx, caddy and wrk from Debian's archive when missing. One
 * upstream nginx (a fixed small JSON, a 1 MiB file, and a 1 MiB upload it
 * reads whole) serves every proxy. Proxies: nginx as the stations run it
 * (`proxy_pass http://…/`: HTTP/1.0 and a new upstream connection per
 * request), nginx with upstream keep-alive, Caddy (`handle_path /api/*` +
 * `reverse_proxy`, `file_server`), and the gateway under the compile
 * task's permissions. No proxy writes an access log. The `tls-*`
 * scenarios measure nginx and the gateway alone, each serving one nginx.conf
 * with `listen … ssl` (a self-signed certificate made by `openssl` at the
 * start), upstream connections kept alive, and the runtime's TLS floor
 * (`deno-min-tls`: bench_min_proxy.ts with the same certificate); in the
 * static ones also the floor that does nginx's file work per request
 * (`deno-min-tls-file`: open, `fstat`, read, close).
 *
 * Pinning: each proxy on CPU 0; wrk and the upstream on CPU 1 (taskset), so
 * every proxy gets exactly one core. Rounds are interleaved (every scenario,
 * proxies in a fresh shuffled order, each started fresh, warmed up under
 * the same load (5 s: see Timing), then measured); ratios are computed per
 * round and their median reported.
 *
 * Usage:
 *   deno task bench [--rounds 3] [--seconds 5] [--warmup 5] [--only a,b]
 *                   [--floor]      adds deno-min (bench_min_proxy.ts) to
 *                                  the small-POST scenarios, and to the
 *                                  proxied JSON's compression scenarios
 *                                  with gzipSync (deno-min) and with
 *                                  CompressionStream (deno-min-cs)
 *                   [--locations]  adds the gateway from two nginx.conf
 *                                  files: one proxied location, and the
 *                                  same with 50 locations (20 regex) the
 *                                  requests do not match
 *                   [--baseline REV]  adds the gateway at git revision REV
 *                                  (a temporary worktree) to every scenario,
 *                                  in the same interleaved rounds: the
 *                                  before/after check for a change (the
 *                                  compression scenarios too when that
 *                                  revision gzips)
 *   deno task bench --cold 10        cold start to the first proxied 200
 *   deno task bench --soak 600       steady load on the gateway, RSS curve
 *   deno task bench --gib 1          1 GiB down and up, RSS sampled
 *
 * @module
 */

import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { COMPILE_FLAGS as GATEWAY_FLAGS } from "./compile.ts";
import { makeCertificate, type TestCertificate } from "../tests/_tls.ts";

const ROOT = new URL("..", import.meta.url).pathname;

interface Scenario {
  name: string;
  conns: number;
  path: string;
  lua?: string;
  /** Over TLS: measured with nginx and the gateway, each with `listen … ssl`. */
  tls?: true;
  /**
   * `gzip_comp_level` of a compression scenario: nginx and the gateway run
   * the same nginx.conf with `gzip on` (gzipConf), the client sends
   * `Accept-Encoding: gzip`.
   */
  gzip?: number;
}

const SCENARIOS: Scenario[] = [
  { name: "post-small-c1", conns: 1, path: "/api/loginms", lua: "small" },
  { name: "post-small-c50", conns: 50, path: "/api/loginms", lua: "small" },
  // The same POST with the fields Chromium sends from the client app.
  { name: "post-browser-c50", conns: 50, path: "/api/loginms", lua: "browser" },
  { name: "get-1mib-c10", conns: 10, path: "/api/big" },
  { name: "post-1mib-c10", conns: 10, path: "/api/upload", lua: "big" },
  { name: "static-index-c50", conns: 50, path: "/index.html" },
  { name: "static-appjs-c50", conns: 50, path: "/app.js" },
  // TLS beside nginx with TLS, one nginx.conf for both (tlsConf).
  {
    name: "tls-post-small-c1",
    conns: 1,
    path: "/api/loginms",
    lua: "small",
    tls: true,
  },
  {
    name: "tls-post-small-c50",
    conns: 50,
    path: "/api/loginms",
    lua: "small",
    tls: true,
  },
  { name: "tls-static-2k-c1", conns: 1, path: "/2k.html", tls: true },
  { name: "tls-static-2k-c50", conns: 50, path: "/2k.html", tls: true },
  // Compressed: a 200 KB script (text, not one repeated byte) from the root
  // and a 5 KB JSON answer from the upstream, at gzip levels 1 and 6.
  { name: "gzip1-appjs-c50", conns: 50, path: "/script.js", gzip: 1 },
  { name: "gzip6-appjs-c50", conns: 50, path: "/script.js", gzip: 6 },
  { name: "gzip1-json5k-c50", conns: 50, path: "/api/data5k", gzip: 1 },
  { name: "gzip6-json5k-c50", conns: 50, path: "/api/data5k", gzip: 6 },
];

/** What Chromium 130 sends with a fetch() POST from the client app (wrk adds Host and Content-Length). */
const BROWSER_FIELDS: Record<string, string> = {
  "Connection": "keep-alive",
  "sec-ch-ua-platform": '"Windows"',
  "User-Agent":
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
  "Accept": "application/json, text/plain, */*",
  "sec-ch-ua": '"Chromium";v="130", "Not?A_Brand";v="99"',
  "Content-Type": "application/json",
  "sec-ch-ua-mobile": "?0",
  "Origin": "http://localhost:8081",
  "Sec-Fetch-Site": "same-origin",
  "Sec-Fetch-Mode": "cors",
  "Sec-Fetch-Dest": "empty",
  "Referer": "http://localhost:8081/",
  "Accept-Encoding": "gzip, deflate, br, zstd",
  "Accept-Language": "en-US,en;q=0.9",
  "Cookie": "ASP.NET_SessionId=0123456789abcdefghijklmn",
};

const PROXIES = ["nginx-deployed", "nginx-ka", "caddy", "gateway"] as const;
/**
 * The reference floor: the least a `Deno.serve` proxy can do, same runtime
 * and flags (scripts/bench_min_proxy.ts). It answers only the small POSTs.
 */
const FLOOR = "deno-min";
/** The floor of the proxied JSON's compression with `CompressionStream`. */
const FLOOR_CS = "deno-min-cs";
/** The gateway at `--baseline REV`, run with the same flags and load. */
const BASE = "gateway-base";
/** The gateway at `--baseline REV` in the TLS scenarios, from their nginx.conf. */
const BASE_TLS = "gateway-base-tls";
/** The gateway from an nginx.conf with one location, and with fifty. */
const CONF_1 = "gw-conf-1";
const CONF_50 = "gw-conf-50";
/**
 * nginx and the gateway serving one nginx.conf with `listen … ssl`, and
 * the TLS floor: `bench_min_proxy.ts` with the same certificate.
 */
const TLS_PROXIES = ["nginx-tls", "gateway-tls", "deno-min-tls"] as const;
/**
 * The TLS static scenarios' floor with nginx's file work per request
 * (nginx has no `open_file_cache` by default): `bench_min_proxy.ts
 * tls-file`.
 */
const FLOOR_TLS_FILE = "deno-min-tls-file";
type ProxyName =
  | typeof PROXIES[number]
  | typeof TLS_PROXIES[number]
  | typeof FLOOR_TLS_FILE
  | typeof FLOOR
  | typeof FLOOR_CS
  | typeof BASE
  | typeof BASE_TLS
  | typeof CONF_1
  | typeof CONF_50;

/** Which optional proxies a run adds. */
interface Extras {
  floor: boolean;
  locations: boolean;
  /** The baseline's checkout (ends with "/"), or `null`. */
  baseRoot: string | null;
  /** The baseline gzips the compression scenarios' answers. */
  baseGzip: boolean;
}

/** The proxies measured in one scenario. */
function proxiesFor(s: Scenario, extras: Extras): ProxyName[] {
  if (s.tls) {
    return [
      ...TLS_PROXIES,
      ...(s.path.startsWith("/api/") ? [] : [FLOOR_TLS_FILE] as const),
      ...(extras.baseRoot === null ? [] : [BASE_TLS] as const),
    ];
  }
  // Compression: nginx and the gateway on one nginx.conf (a baseline that
  // gzips too); the others have no gzip settings to run. The floors gzip a
  // proxied answer only.
  if (s.gzip !== undefined) {
    return [
      "nginx-ka",
      "gateway",
      ...(extras.baseGzip ? [BASE] as const : []),
      ...(extras.floor && s.path.startsWith("/api/")
        ? [FLOOR, FLOOR_CS] as const
        : []),
    ];
  }
  return [
    ...PROXIES,
    ...(extras.baseRoot === null ? [] : [BASE] as const),
    ...(extras.floor && s.path === "/api/loginms" ? [FLOOR] as const : []),
    ...(extras.locations ? [CONF_1, CONF_50] as const : []),
  ];
}

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  /**
   * wrk's mean latency times its request rate. With one connection the
   * exact value is at most 1.00 (each request waits for the one before);
   * wrk reads 1.03-1.14 for every proxy on a quiet host. A proxy well above
   * the others has c1 latencies that overlap in wrk's accounting: in noisy
   * runs the gateway read 1.27-1.66 while nginx read 1.03.
   */
  busy: number;
  errors: number;
  cpuUsPerReq: number;
  peakRssMb: number;
}

function log(text: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(`${text}\n`));
}

async function run(cmd: string[], options: Deno.CommandOptions = {}) {
  const out = await new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    stdout: "piped",
    stderr: "piped",
    ...options,
  }).output();
  return {
    ok: out.success,
    out: new TextDecoder().decode(out.stdout),
    err: new TextDecoder().decode(out.stderr),
  };
}

async function ensureTools(): Promise<void> {
  const missing: string[] = [];
  for (
    const [bin, pkg] of [["/usr/sbin/nginx", "nginx"], [
      "/usr/bin/caddy",
      "caddy",
    ], ["/usr/bin/wrk", "wrk"]]
  ) {
    try {
      await Deno.stat(bin!);
    } catch {
      missing.push(pkg!);
    }
  }
  if (missing.length === 0) return;
  log(`installing ${missing.join(" ")} from Debian's archive`);
  const policy = "/usr/sbin/policy-rc.d";
  await Deno.writeTextFile(policy, "#!/bin/sh\nexit 101\n", { mode: 0o755 });
  try {
    await run(["apt-get", "update", "-qq"]);
    const r = await run([
      "apt-get",
      "install",
      "-y",
      "-qq",
      "--no-install-recommends",
      ...missing,
    ], {
      env: { DEBIAN_FRONTEND: "noninteractive" },
    });
    if (!r.ok) {
      throw new Error(`apt-get install ${missing.join(" ")} failed: ${r.err}`);
    }
  } finally {
    await Deno.remove(policy).catch(() => {});
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  return port;
}

async function waitReady(
  port: number,
  path: string,
  method = "GET",
  tlsCert?: string,
): Promise<void> {
  const end = Date.now() + 15_000;
  using client = tlsCert === undefined
    ? undefined
    : Deno.createHttpClient({ caCerts: [tlsCert] });
  const scheme = tlsCert === undefined ? "http" : "https";
  while (Date.now() < end) {
    try {
      const res = await fetch(`${scheme}://localhost:${port}${path}`, {
        method,
        ...(method === "POST" ? { body: "{}" } : {}),
        ...(client === undefined ? {} : { client }),
      });
      await res.body?.cancel();
      if (res.status < 500) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`nothing answered on ${port}${path}`);
}

function procStat(pid: number): { cpuTicks: number; hwmKb: number } {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return {
      cpuTicks: Number(fields[11]) + Number(fields[12]),
      hwmKb: Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0),
    };
  } catch {
    return { cpuTicks: 0, hwmKb: 0 };
  }
}

interface Lab {
  dir: string;
  www: string;
  upstreamPort: number;
  upstream: Deno.ChildProcess;
  /** The `--baseline` checkout, ending with "/"; `null` without one. */
  baseRoot: string | null;
  /**
   * The run flags of the baseline's own tree (its `scripts/compile.ts`):
   * the code before runs as the stations ran it.
   */
  baseFlags: readonly string[];
  /** The baseline gzips the compression scenarios' JSON answer. */
  baseGzip: boolean;
  /** The TLS scenarios' self-signed certificate and key. */
  cert: TestCertificate;
}

async function setUp(): Promise<Lab> {
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-" });
  const www = `${dir}/www`;
  await Deno.mkdir(www);
  await Deno.writeTextFile(
    `${www}/index.html`,
    `<!doctype html><title>station</title>${
      "<p>station client app</p>".repeat(80)
    }`,
  );
  await Deno.writeFile(`${www}/app.js`, new Uint8Array(200 * 1024).fill(0x61));
  await Deno.writeFile(`${www}/2k.html`, new Uint8Array(2048).fill(0x63));
  const cert = await makeCertificate(dir);
  await Deno.writeTextFile(`${www}/script.js`, scriptText(200 * 1024));
  await Deno.writeTextFile(
    `${dir}/data5k.json`,
    JSON.stringify(
      Array.from({ length: 60 }, (_, i) => ({
        id: i,
        station: `ST-${1000 + i * 7919 % 997}`,
        state: ["idle", "busy", "offline"][i % 3],
        updated: 1764000000 + i * 37,
      })),
    ),
  );
  await Deno.writeFile(
    `${dir}/big.bin`,
    new Uint8Array(1024 * 1024).fill(0x62),
  );
  await Deno.writeTextFile(
    `${dir}/small.lua`,
    `wrk.method = "POST"\nwrk.body = '{"user":"demo","password":"x","round":0}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  await Deno.writeTextFile(
    `${dir}/browser.lua`,
    `wrk.method = "POST"\nwrk.body = '{"user":"demo","password":"x","round":0}'\n${
      Object.entries(BROWSER_FIELDS).map(([name, value]) =>
        `wrk.headers["${name}"] = '${value}'\n`
      ).join("")
    }`,
  );
  await Deno.writeTextFile(
    `${dir}/big.lua`,
    `wrk.method = "POST"\nwrk.body = string.rep("a", 1048576)\nwrk.headers["Content-Type"] = "application/octet-stream"\n`,
  );
  const upstreamPort = freePort();
  const json = JSON.stringify({
    ok: true,
    user: "demo",
    session: "0123456789abcdef",
    title: "Station 7",
    padding: "xxxxxxxx",
  });
  await Deno.writeTextFile(
    `${dir}/upstream.conf`,
    `
daemon off; master_process off; worker_processes 1; pid ${dir}/up.pid;
error_log ${dir}/up-error.log crit;
events { worker_connections 4096; }
http {
  access_log off; client_body_temp_path ${dir}/up-body; proxy_temp_path ${dir}/up-proxy;
  fastcgi_temp_path ${dir}/up-f; uwsgi_temp_path ${dir}/up-u; scgi_temp_path ${dir}/up-s;
  client_max_body_size 2m; client_body_buffer_size 2m; keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${upstreamPort};
    location = /loginms { default_type application/json; return 200 '${json}'; }
    location = /big { alias ${dir}/big.bin; }
    location = /data5k { default_type application/json; alias ${dir}/data5k.json; }
    # Read the whole upload before answering, as an application would.
    location = /upload { proxy_pass http://127.0.0.1:${upstreamPort}/ack; }
    location = /ack { default_type application/json; return 200 '{"received":"$content_length"}'; }
  }
}`,
  );
  const upstream = new Deno.Command("taskset", {
    args: [
      "-c",
      "1",
      "/usr/sbin/nginx",
      "-p",
      dir,
      "-c",
      `${dir}/upstream.conf`,
      "-e",
      `${dir}/up-error.log`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitReady(upstreamPort, "/loginms", "POST");
  return {
    dir,
    www,
    upstreamPort,
    upstream,
    baseRoot: null,
    baseFlags: GATEWAY_FLAGS,
    baseGzip: false,
    cert,
  };
}

/**
 * The run flags the baseline's tree builds with (`COMPILE_FLAGS` of its
 * `scripts/compile.ts`), so a change of flags is measured as the stations
 * get it; this tree's when the baseline has none.
 */
async function baselineFlags(root: string): Promise<readonly string[]> {
  try {
    const module = await import(
      pathToFileURL(`${root}scripts/compile.ts`).href
    );
    const flags: unknown = module.COMPILE_FLAGS;
    if (
      Array.isArray(flags) && flags.every((f) => typeof f === "string")
    ) return flags;
  } catch {
    // An old tree without the module: this tree's flags.
  }
  return GATEWAY_FLAGS;
}

/** Says which run flags each side had, when the baseline's differ. */
function flagsNote(lab: Lab): string {
  const v8 = (flags: readonly string[]) =>
    flags.find((f) => f.startsWith("--v8-flags=")) ?? "no V8 flags";
  if (lab.baseRoot === null || v8(lab.baseFlags) === v8(GATEWAY_FLAGS)) {
    return "";
  }
  return `The baseline runs with its own tree's \`${
    v8(lab.baseFlags)
  }\`, the gateway with \`${v8(GATEWAY_FLAGS)}\`.\n\n`;
}

/** The run flags of a tree: the baseline's own, or this tree's. */
function runFlags(lab: Lab, root: string): readonly string[] {
  return root === lab.baseRoot ? lab.baseFlags : GATEWAY_FLAGS;
}

/** `deno run` arguments for the gateway as the stations run it. */
function gatewayArgs(
  lab: Lab,
  port: number,
  errorLog: string,
  root = ROOT,
): string[] {
  return [
    "run",
    "-q",
    ...runFlags(lab, root),
    `${root}src/main.ts`,
    "--listen",
    `127.0.0.1:${port}`,
    "--upstream",
    `http://127.0.0.1:${lab.upstreamPort}`,
    "--root",
    lab.www,
    "--error-log",
    `${lab.dir}/${errorLog}`,
    "--access-log",
    "off",
    "--client-max-body-size",
    "2m",
  ];
}

/**
 * The nginx.conf of the location-count check: the small POSTs and the
 * static files go through the same two locations; with `many`, 28 prefix
 * and 20 regex locations more that no request matches, so every request
 * runs every regex (the search's worst case).
 */
function locationsConf(lab: Lab, port: number, many: boolean): string {
  const filler = many
    ? [
      ...Array.from(
        { length: 28 },
        (_, i) => `location /section${i}/ { return 404; }`,
      ),
      ...Array.from(
        { length: 20 },
        (_, i) => `location ~* \\.(ext${i}|alt${i})$ { return 404; }`,
      ),
    ].join("\n    ")
    : "";
  // The main level's log named, as in tlsConf.
  return `error_log ${lab.dir}/gw-conf-error.log;
events {}
http {
  access_log off;
  client_max_body_size 2m;
  upstream app { server 127.0.0.1:${lab.upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    root ${lab.www};
    ${filler}
    location /api/ {
      proxy_pass http://app/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/**
 * The TLS scenarios' nginx.conf, one text for nginx and the gateway (nginx
 * gets its process lines before it): the app and `/api/` on a
 * `listen … ssl` port, upstream connections kept alive.
 */
function tlsConf(lab: Lab, port: number, name: string): string {
  const { dir, www, upstreamPort, cert } = lab;
  // The main level's log named: the default one is logs/error.log under
  // the prefix, the folder above the lab's (/tmp).
  return `error_log ${dir}/${name}-error.log crit;
events {}
http {
  access_log off;
  client_max_body_size 2m;
  keepalive_requests 1000000;
  types { text/html html; application/javascript js; }
  upstream app { server 127.0.0.1:${upstreamPort}; keepalive 32; }
  server {
    listen 127.0.0.1:${port} ssl;
    server_name localhost;
    ssl_certificate ${cert.certPath};
    ssl_certificate_key ${cert.keyPath};
    root ${www};
    location /api/ {
      proxy_pass http://app/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/** A script of `size` bytes that compresses as real code does (not one byte repeated). */
function scriptText(size: number): string {
  let out = "";
  for (let i = 0; out.length < size; i++) {
    out += `function handler${i}(event, state) {\n  if (state.mode${
      i % 13
    } === "${
      ["idle", "busy", "offline"][i % 3]
    }") {\n    return render(event.target, { id: ${
      i * 7919 % 10007
    }, label: "item-${
      i % 97
    }" });\n  }\n  return state.items.filter((x) => x.id !== ${i});\n}\n`;
  }
  return out.slice(0, size);
}

/**
 * The compression scenarios' nginx.conf, the same for nginx and the
 * gateway: the root, `/api/` over kept-alive upstream connections, and
 * `gzip on` at `level` for the script and JSON types.
 */
function gzipConf(
  lab: Lab,
  options: { port: number; level: number; nginx: boolean },
): string {
  const { dir } = lab;
  const name = options.nginx ? "nginx-gzip" : "gw-gzip";
  const process = options.nginx
    ? `daemon off; master_process off; worker_processes 1; pid ${dir}/${name}.pid;\n`
    : "";
  const temp = options.nginx
    ? `client_body_temp_path ${dir}/${name}-body; proxy_temp_path ${dir}/${name}-proxy;
  fastcgi_temp_path ${dir}/${name}-f; uwsgi_temp_path ${dir}/${name}-u; scgi_temp_path ${dir}/${name}-s;`
    : "";
  return `${process}error_log ${dir}/${name}-error.log crit;
events { worker_connections 4096; }
http {
  access_log off; keepalive_requests 1000000; client_max_body_size 2m;
  ${temp}
  types { text/html html; application/javascript js; application/json json; }
  gzip on;
  gzip_comp_level ${options.level};
  gzip_types application/javascript application/json;
  upstream app { server 127.0.0.1:${lab.upstreamPort}; keepalive 32; }
  server {
    listen 127.0.0.1:${options.port}; server_name localhost; root ${lab.www};
    location /api/ {
      proxy_pass http://app/; proxy_http_version 1.1; proxy_set_header Connection "";
    }
  }
}
`;
}

/** The command of a floor: `bench_min_proxy.ts` in one of its modes. */
function minProxy(
  port: number,
  upstreamPort: number,
  mode: string[],
): string[] {
  return [
    Deno.execPath(),
    "run",
    ...GATEWAY_FLAGS,
    `${ROOT}scripts/bench_min_proxy.ts`,
    String(port),
    String(upstreamPort),
    ...mode,
  ];
}

async function startProxy(
  lab: Lab,
  name: ProxyName,
  gzip?: number,
): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const port = freePort();
  const { dir, www, upstreamPort } = lab;
  let cmd: string[];
  const env: Record<string, string> = {};
  if (gzip !== undefined && (name === FLOOR || name === FLOOR_CS)) {
    cmd = minProxy(port, upstreamPort, [
      "gzip",
      String(gzip),
      name === FLOOR ? "zlib" : "stream",
    ]);
  } else if (gzip !== undefined) {
    const conf = `${dir}/${name}-gzip.conf`;
    const nginx = name === "nginx-ka";
    await Deno.writeTextFile(conf, gzipConf(lab, { port, level: gzip, nginx }));
    cmd = nginx
      ? [
        "/usr/sbin/nginx",
        "-p",
        dir,
        "-c",
        conf,
        "-e",
        `${dir}/${name}-error.log`,
      ]
      : [
        Deno.execPath(),
        "run",
        "-q",
        ...runFlags(lab, name === BASE ? lab.baseRoot! : ROOT),
        `${name === BASE ? lab.baseRoot : ROOT}src/main.ts`,
        "--nginx-conf",
        conf,
      ];
  } else if (name === "gateway") {
    cmd = [Deno.execPath(), ...gatewayArgs(lab, port, "gw-error.log")];
  } else if (
    name === "gateway-tls" || name === "nginx-tls" || name === BASE_TLS
  ) {
    const conf = `${dir}/${name}.conf`;
    const text = tlsConf(lab, port, name);
    if (name !== "nginx-tls") {
      await Deno.writeTextFile(conf, text);
      cmd = [
        Deno.execPath(),
        "run",
        "-q",
        ...runFlags(lab, name === BASE_TLS ? lab.baseRoot! : ROOT),
        `${name === BASE_TLS ? lab.baseRoot : ROOT}src/main.ts`,
        "--nginx-conf",
        conf,
      ];
    } else {
      await Deno.writeTextFile(
        conf,
        `daemon off; master_process off; worker_processes 1; pid ${dir}/${name}.pid;
${
          text.replace("events {}", "events { worker_connections 4096; }")
            .replace(
              "access_log off;",
              `access_log off; client_body_temp_path ${dir}/${name}-body; proxy_temp_path ${dir}/${name}-proxy; fastcgi_temp_path ${dir}/${name}-f; uwsgi_temp_path ${dir}/${name}-u; scgi_temp_path ${dir}/${name}-s;`,
            )
        }`,
      );
      cmd = [
        "/usr/sbin/nginx",
        "-p",
        dir,
        "-c",
        conf,
        "-e",
        `${dir}/${name}-error.log`,
      ];
    }
  } else if (name === CONF_1 || name === CONF_50) {
    const conf = `${dir}/${name}.conf`;
    await Deno.writeTextFile(conf, locationsConf(lab, port, name === CONF_50));
    cmd = [
      Deno.execPath(),
      "run",
      "-q",
      ...GATEWAY_FLAGS,
      `${ROOT}src/main.ts`,
      "--nginx-conf",
      conf,
    ];
  } else if (name === BASE) {
    cmd = [
      Deno.execPath(),
      ...gatewayArgs(lab, port, "base-error.log", lab.baseRoot!),
    ];
  } else if (
    name === FLOOR || name === "deno-min-tls" || name === FLOOR_TLS_FILE
  ) {
    const { certPath, keyPath } = lab.cert;
    cmd = minProxy(
      port,
      upstreamPort,
      name === FLOOR
        ? []
        : name === FLOOR_TLS_FILE
        ? ["tls-file", certPath, keyPath, www]
        : ["tls", certPath, keyPath, `${www}/2k.html`],
    );
  } else if (name === "caddy") {
    await Deno.writeTextFile(
      `${dir}/Caddyfile`,
      `{
  admin off
  auto_https off
}
http://127.0.0.1:${port} {
  handle_path /api/* {
    reverse_proxy 127.0.0.1:${upstreamPort}
  }
  handle {
    root * ${www}
    file_server
  }
}
`,
    );
    cmd = [
      "/usr/bin/caddy",
      "run",
      "--config",
      `${dir}/Caddyfile`,
      "--adapter",
      "caddyfile",
    ];
    env.GOMAXPROCS = "1";
    env.HOME = dir;
    env.XDG_DATA_HOME = `${dir}/caddy-data`;
    env.XDG_CONFIG_HOME = `${dir}/caddy-config`;
  } else {
    const ka = name === "nginx-ka";
    await Deno.writeTextFile(
      `${dir}/${name}.conf`,
      `
daemon off; master_process off; worker_processes 1; pid ${dir}/${name}.pid;
error_log ${dir}/${name}-error.log crit;
events { worker_connections 4096; }
http {
  access_log off; sendfile on; keepalive_requests 1000000; client_max_body_size 2m;
  client_body_temp_path ${dir}/${name}-body; proxy_temp_path ${dir}/${name}-proxy;
  fastcgi_temp_path ${dir}/${name}-f; uwsgi_temp_path ${dir}/${name}-u; scgi_temp_path ${dir}/${name}-s;
  types { text/html html; application/javascript js; }
  ${
        ka
          ? `upstream app { server 127.0.0.1:${upstreamPort}; keepalive 32; }`
          : ""
      }
  server {
    listen 127.0.0.1:${port}; server_name localhost; root ${www};
    location /api/ {
      ${
        ka
          ? 'proxy_pass http://app/; proxy_http_version 1.1; proxy_set_header Connection "";'
          : `proxy_pass http://127.0.0.1:${upstreamPort}/;`
      }
    }
  }
}`,
    );
    cmd = [
      "/usr/sbin/nginx",
      "-p",
      dir,
      "-c",
      `${dir}/${name}.conf`,
      "-e",
      `${dir}/${name}-error.log`,
    ];
  }
  const logFile = await Deno.open(`${dir}/${name}.out`, {
    write: true,
    create: true,
    truncate: true,
  });
  const child = new Deno.Command("taskset", {
    args: ["-c", "0", ...cmd],
    stdout: "null",
    stderr: "piped",
    env,
  }).spawn();
  const drained = child.stderr.pipeTo(logFile.writable);
  try {
    await waitReady(
      port,
      "/api/loginms",
      "POST",
      (TLS_PROXIES as readonly string[]).includes(name) ||
        name === BASE_TLS || name === FLOOR_TLS_FILE
        ? lab.cert.cert
        : undefined,
    );
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch { /* it exited: a refused configuration */ }
    await child.status;
    await drained.catch(() => {});
    const out = await Deno.readTextFile(`${dir}/${name}.out`).catch(() => "");
    throw new Error(`${name} did not start: ${out.slice(-2000)}`, {
      cause: error,
    });
  }
  return {
    port,
    pid: child.pid,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 3000);
      await child.status;
      clearTimeout(timer);
      await drained.catch(() => {});
    },
  };
}

/**
 * Whether the baseline gzips the compression scenarios' JSON answer from
 * their nginx.conf (a revision before `gzip` refuses that file, or warns
 * and sends the answer as it is: either compares nothing).
 */
async function baselineGzips(lab: Lab): Promise<boolean> {
  let proxy;
  try {
    proxy = await startProxy(lab, BASE, 1);
  } catch {
    return false;
  }
  let conn: Deno.TcpConn | null = null;
  try {
    // A plain socket: fetch would decode the body and drop the field.
    conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
    await conn.write(new TextEncoder().encode(
      "GET /api/data5k HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
    ));
    let head = "";
    const buf = new Uint8Array(16 * 1024);
    for (let reads = 0; reads < 100 && !head.includes("\r\n\r\n"); reads++) {
      const n = await conn.read(buf);
      if (n === null) break;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    return /^content-encoding:\s*gzip\s*$/im.test(head.split("\r\n\r\n")[0]!);
  } finally {
    conn?.close();
    await proxy.stop();
  }
}

function parseDuration(text: string): number {
  const m = text.match(/([\d.]+)(us|ms|s)/);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
}

async function wrk(
  lab: Lab,
  port: number,
  s: Scenario,
  seconds: number,
): Promise<
  Omit<Measurement, "cpuUsPerReq" | "peakRssMb"> & { requests: number }
> {
  const args = [
    "-c",
    "1",
    "wrk",
    "-t1",
    `-c${s.conns}`,
    `-d${seconds}s`,
    "--latency",
    "--timeout",
    "10s",
  ];
  if (s.lua) args.push("-s", `${lab.dir}/${s.lua}.lua`);
  if (s.gzip !== undefined) args.push("-H", "Accept-Encoding: gzip");
  args.push(`${s.tls ? "https" : "http"}://127.0.0.1:${port}${s.path}`);
  const r = await run(["taskset", ...args]);
  const out = r.out;
  const requests = Number(out.match(/(\d+) requests in/)?.[1] ?? 0);
  const socket = out.match(
    /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/,
  );
  const non2xx = Number(out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const errors = non2xx +
    (socket ? socket.slice(1).map(Number).reduce((a, b) => a + b, 0) : 0);
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0);
  const mean = parseDuration(out.match(/Latency\s+(\S+)/)?.[1] ?? "");
  return {
    rps,
    busy: (mean / 1000) * rps,
    p50: parseDuration(out.match(/\s50%\s+(\S+)/)?.[1] ?? ""),
    p99: parseDuration(out.match(/\s99%\s+(\S+)/)?.[1] ?? ""),
    errors,
    requests,
  };
}

/** How long each measurement runs and warms up, in seconds. */
interface Timing {
  seconds: number;
  /**
   * Before each measurement, the same load for this long. A JIT runtime
   * needs it: in the first seconds V8 still compiles ~70 hot functions with
   * TurboFan (3-9 ms each, --trace-opt), on a worker thread that shares the
   * pinned core, and `perf sched timehist` shows the main thread waiting
   * 1.5-4 ms behind it. After 1 s the gateway's p99 at c1 was 2.5 ms, after
   * 8 s 0.9 ms. A station runs for months: steady state is the figure.
   */
  warmup: number;
}

async function measure(
  lab: Lab,
  target: { name: ProxyName; scenario: Scenario },
  timing: Timing,
): Promise<Measurement> {
  const { name, scenario: s } = target;
  const seconds = timing.seconds;
  const proxy = await startProxy(lab, name, s.gzip);
  try {
    await wrk(lab, proxy.port, s, timing.warmup);
    const before = procStat(proxy.pid);
    const result = await wrk(lab, proxy.port, s, seconds);
    const after = procStat(proxy.pid);
    const ticks = after.cpuTicks - before.cpuTicks;
    return {
      rps: result.rps,
      busy: result.busy,
      p50: result.p50,
      p99: result.p99,
      errors: result.errors,
      cpuUsPerReq: result.requests > 0
        ? (ticks * 10_000) / result.requests
        : NaN,
      peakRssMb: after.hwmKb / 1024,
    };
  } finally {
    await proxy.stop();
  }
}

/**
 * `--pair`: the gateway and the gateway at `--baseline REV` run at the same
 * time on the same core, each under its own wrk on the other, and their CPU
 * per request is compared in each round. The host's noise lands on both
 * alike: an A/A run (`--baseline HEAD`) read the two within 1 % in every
 * round on a host at load 10, where rounds of `compare()` differ by 15 %.
 * Both stay up through the rounds, after one warm-up under the same load.
 */
async function pairs(
  lab: Lab,
  options: Timing & { rounds: number; only: Set<string> | null },
): Promise<string> {
  const { rounds, seconds, warmup, only } = options;
  const scenarios = SCENARIOS.filter((s) =>
    (only === null || only.has(s.name)) && s.tls !== true &&
    s.gzip === undefined
  );
  const lines = [
    `CPU µs/req of gateway and ${BASE}, run at once on CPU 0 (\`--pair\`, ${rounds} rounds of ${seconds} s after ${warmup} s of warm-up):`,
    "",
    ...(flagsNote(lab) === "" ? [] : [flagsNote(lab).trim(), ""]),
    `| scenario | round | gateway | ${BASE} | ÷ ${BASE} |`,
    "| --- | --- | --- | --- | --- |",
  ];
  const summary: string[] = [];
  for (const s of scenarios) {
    const a = await startProxy(lab, "gateway");
    const b = await startProxy(lab, BASE).catch(async (error) => {
      await a.stop();
      throw error;
    });
    try {
      const both = async (time: number) => {
        const before = [procStat(a.pid), procStat(b.pid)];
        const [ra, rb] = await Promise.all([
          wrk(lab, a.port, s, time),
          wrk(lab, b.port, s, time),
        ]);
        const after = [procStat(a.pid), procStat(b.pid)];
        const cpu = (i: number, n: number) =>
          n > 0
            ? ((after[i]!.cpuTicks - before[i]!.cpuTicks) * 10_000) / n
            : NaN;
        return [cpu(0, ra.requests), cpu(1, rb.requests)] as const;
      };
      if (warmup > 0) await both(warmup);
      const ratios: number[] = [];
      for (let round = 1; round <= rounds; round++) {
        const [x, y] = await both(seconds);
        ratios.push(x / y);
        lines.push(
          `| ${s.name} | ${round} | ${fmt(x)} | ${fmt(y)} | ${fmt(x / y, 3)} |`,
        );
        log(`${s.name} pair ${round}: ${fmt(x)} vs ${fmt(y)} µs/req`);
      }
      summary.push(
        `- ${s.name}: ${fmt(median(ratios), 3)} [${
          fmt(Math.min(...ratios), 3)
        }–${fmt(Math.max(...ratios), 3)}]`,
      );
    } finally {
      await a.stop();
      await b.stop();
    }
  }
  return [
    ...lines,
    "",
    `Gateway CPU µs/req ÷ ${BASE}'s, median [min–max] of the rounds:`,
    "",
    ...summary,
    "",
  ].join("\n");
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function fmt(x: number, digits = 0): string {
  return Number.isFinite(x) ? x.toFixed(digits) : "-";
}

function shuffled<T>(xs: readonly T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

async function compare(
  lab: Lab,
  options: Timing & {
    rounds: number;
    only: Set<string> | null;
    floor: boolean;
    locations: boolean;
    baseline: string | null;
  },
): Promise<string> {
  const { rounds, seconds, warmup, only, floor, baseline, locations } = options;
  const extras: Extras = {
    floor,
    locations,
    baseRoot: lab.baseRoot,
    baseGzip: lab.baseGzip,
  };
  const scenarios = SCENARIOS.filter((s) => only === null || only.has(s.name));
  const results = new Map<string, Measurement[]>();
  for (let round = 1; round <= rounds; round++) {
    for (const s of scenarios) {
      for (const p of shuffled(proxiesFor(s, extras))) {
        const m = await measure(lab, { name: p, scenario: s }, {
          seconds,
          warmup,
        });
        results.set(`${s.name}|${p}`, [
          ...(results.get(`${s.name}|${p}`) ?? []),
          m,
        ]);
        log(
          `round ${round} ${s.name} ${p}: ${fmt(m.rps)} req/s, p99 ${
            fmt(m.p99, 2)
          } ms, ${fmt(m.cpuUsPerReq)} µs/req, ${
            fmt(m.peakRssMb)
          } MB, errors ${m.errors}`,
        );
      }
    }
  }
  let md = `Measured ${
    new Date().toISOString().slice(0, 16).replace("T", " ")
  } UTC with \`deno task bench --rounds ${rounds} --seconds ${seconds} --warmup ${warmup}${
    floor ? " --floor" : ""
  }${locations ? " --locations" : ""}${
    baseline === null ? "" : ` --baseline ${baseline}`
  }\` (${Deno.build.os}, ${navigator.hardwareConcurrency} CPUs, Deno ${Deno.version.deno}); each proxy pinned to CPU 0, wrk -t1 and the upstream on CPU 1; each proxy started fresh and warmed up ${warmup} s under the same load; medians of ${rounds} interleaved rounds, [min–max] for req/s and ratios.\n\n${
    flagsNote(lab)
  }`;
  md +=
    "| scenario | proxy | req/s | p50 ms | p99 ms | errors | CPU µs/req | peak RSS MB |\n|---|---|---|---|---|---|---|---|\n";
  const ratioRows: string[] = [];
  for (const s of scenarios) {
    for (const p of proxiesFor(s, extras)) {
      const ms = results.get(`${s.name}|${p}`)!;
      const rps = ms.map((m) => m.rps);
      md += `| ${s.name} | ${p} | ${fmt(median(rps))} [${
        fmt(Math.min(...rps))
      }–${fmt(Math.max(...rps))}] | ${fmt(median(ms.map((m) => m.p50)), 2)} | ${
        fmt(median(ms.map((m) => m.p99)), 2)
      } | ${ms.reduce((n, m) => n + m.errors, 0)} | ${
        fmt(median(ms.map((m) => m.cpuUsPerReq)))
      } | ${fmt(Math.max(...ms.map((m) => m.peakRssMb)))} |\n`;
    }
    if (s.tls) continue;
    const gw = results.get(`${s.name}|gateway`)!;
    const ratio = (other: ProxyName) => {
      if (!results.has(`${s.name}|${other}`)) return "-";
      const r = gw.map((m, i) =>
        m.rps / results.get(`${s.name}|${other}`)![i]!.rps
      );
      return `${fmt(median(r), 2)} [${fmt(Math.min(...r), 2)}–${
        fmt(Math.max(...r), 2)
      }]`;
    };
    const withFloor = floor && proxiesFor(s, extras).includes(FLOOR);
    ratioRows.push(
      `| ${s.name} | ${ratio("nginx-deployed")} | ${ratio("nginx-ka")} | ${
        ratio("caddy")
      } |${floor ? ` ${withFloor ? ratio(FLOOR) : "-"} |` : ""}${
        baseline === null ? "" : ` ${ratio(BASE)} |`
      }`,
    );
  }
  // A run of TLS scenarios alone has no row for this table.
  if (ratioRows.length > 0) {
    md +=
      `\nGateway req/s ÷ the other proxy's, per round:\n\n| scenario | ÷ nginx as deployed | ÷ nginx keep-alive | ÷ Caddy |${
        floor ? " ÷ deno-min |" : ""
      }${
        baseline === null ? "" : ` ÷ gateway at ${baseline} |`
      }\n|---|---|---|---|${floor ? "---|" : ""}${
        baseline === null ? "" : "---|"
      }\n` +
      ratioRows.join("\n") + "\n";
  }
  const tls = scenarios.filter((s) => s.tls);
  if (tls.length > 0) {
    // The issue's goal: CPU per request at most 1.3× nginx's, p99 at c1
    // at most 1.5×.
    const per = (
      s: Scenario,
      pick: (m: Measurement) => number,
      [a, b]: [ProxyName, ProxyName] = ["gateway-tls", "nginx-tls"],
    ) => {
      const gw = results.get(`${s.name}|${a}`)!;
      const ng = results.get(`${s.name}|${b}`)!;
      const r = gw.map((m, i) => pick(m) / pick(ng[i]!));
      return `${fmt(median(r), 2)} [${fmt(Math.min(...r), 2)}–${
        fmt(Math.max(...r), 2)
      }]`;
    };
    md +=
      "\nTLS, gateway-tls ÷ nginx-tls per round (goal: CPU ≤ 1.3, p99 at c1 ≤ 1.5), and the runtime's floor (deno-min-tls):\n\n| scenario | req/s | CPU µs/req | p99 | floor CPU ÷ nginx-tls | floor p99 ÷ nginx-tls | gateway-tls CPU ÷ floor |\n|---|---|---|---|---|---|---|\n" +
      tls.map((s) => {
        const floor: [ProxyName, ProxyName] = ["deno-min-tls", "nginx-tls"];
        return `| ${s.name} | ${per(s, (m) => m.rps)} | ${
          per(s, (m) => m.cpuUsPerReq)
        } | ${per(s, (m) => m.p99)} | ${
          per(s, (m) => m.cpuUsPerReq, floor)
        } | ${per(s, (m) => m.p99, floor)} | ${
          per(s, (m) => m.cpuUsPerReq, ["gateway-tls", "deno-min-tls"])
        } |`;
      }).join("\n") + "\n";
    const files = tls.filter((s) =>
      proxiesFor(s, extras).includes(FLOOR_TLS_FILE)
    );
    if (files.length > 0) {
      const file: [ProxyName, ProxyName] = [FLOOR_TLS_FILE, "nginx-tls"];
      const gateway: [ProxyName, ProxyName] = ["gateway-tls", FLOOR_TLS_FILE];
      md +=
        `\nTLS static, the floor with nginx's file work per request (${FLOOR_TLS_FILE}: open, fstat, read, close), per round:\n\n| scenario | file floor CPU ÷ nginx-tls | file floor p99 ÷ nginx-tls | gateway-tls CPU ÷ file floor | gateway-tls p99 ÷ file floor |\n|---|---|---|---|---|\n` +
        files.map((s) =>
          `| ${s.name} | ${per(s, (m) => m.cpuUsPerReq, file)} | ${
            per(s, (m) => m.p99, file)
          } | ${per(s, (m) => m.cpuUsPerReq, gateway)} | ${
            per(s, (m) => m.p99, gateway)
          } |`
        ).join("\n") + "\n";
    }
  }
  const gzipped = scenarios.filter((s) => s.gzip !== undefined);
  if (gzipped.length > 0) {
    // The goal of compression: CPU per compressed response at most 1.2x
    // nginx's; the floors tell what the runtime itself can reach.
    md += `\nCPU µs/req ÷ nginx's with the same gzip settings, per round:\n\n` +
      gzipped.flatMap((s) => {
        const ng = results.get(`${s.name}|nginx-ka`)!;
        return proxiesFor(s, extras).filter((p) => p !== "nginx-ka").map(
          (p) => {
            const r = results.get(`${s.name}|${p}`)!.map((m, i) =>
              m.cpuUsPerReq / ng[i]!.cpuUsPerReq
            );
            return `- ${s.name} ${p}: ${fmt(median(r), 2)} [${
              fmt(Math.min(...r), 2)
            }–${fmt(Math.max(...r), 2)}]`;
          },
        );
      }).join("\n") + "\n";
  }
  if (baseline !== null) {
    // CPU per request is the steadiest figure for a before/after check.
    md +=
      `\nGateway CPU µs/req ÷ the gateway at ${baseline}'s, per round:\n\n` +
      scenarios.filter((s) => {
        const proxies = proxiesFor(s, extras);
        return proxies.includes(BASE) || proxies.includes(BASE_TLS);
      }).map((s) => {
        const now = results.get(
          `${s.name}|${s.tls ? "gateway-tls" : "gateway"}`,
        )!;
        const base = results.get(`${s.name}|${s.tls ? BASE_TLS : BASE}`)!;
        const r = now.map((m, i) => m.cpuUsPerReq / base[i]!.cpuUsPerReq);
        return `- ${s.name}: ${fmt(median(r), 2)} [${fmt(Math.min(...r), 2)}–${
          fmt(Math.max(...r), 2)
        }]`;
      }).join("\n") + "\n";
  }
  if (locations) {
    md += `\nCPU µs/req of ${CONF_50} − ${CONF_1}'s, per round:\n\n` +
      scenarios.filter((s) => !s.tls && s.gzip === undefined).map((s) => {
        const one = results.get(`${s.name}|${CONF_1}`)!;
        const fifty = results.get(`${s.name}|${CONF_50}`)!;
        const d = fifty.map((m, i) => m.cpuUsPerReq - one[i]!.cpuUsPerReq);
        return `- ${s.name}: ${fmt(median(d), 1)} [${fmt(Math.min(...d), 1)}–${
          fmt(Math.max(...d), 1)
        }]`;
      }).join("\n") + "\n";
  }
  const c1 = scenarios.filter((s) => s.conns === 1);
  if (c1.length > 0) {
    md +=
      "\nCheck of wrk's latencies at one connection: mean latency × req/s, median of the rounds (exactly at most 1.00 with one connection; wrk reads 1.03-1.14 on a quiet host, and a proxy well above the others has overlapping latencies in wrk's accounting):\n\n" +
      c1.map((s) =>
        `- ${s.name}: ${
          proxiesFor(s, extras).map((p) =>
            `${p} ${
              fmt(median(results.get(`${s.name}|${p}`)!.map((m) => m.busy)), 2)
            }`
          ).join(", ")
        }`
      ).join("\n") + "\n";
  }
  return md;
}

async function coldStart(lab: Lab, runs: number): Promise<string> {
  const times: number[] = [];
  const idle: number[] = [];
  for (let i = 0; i < runs; i++) {
    const port = freePort();
    const started = performance.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: gatewayArgs(lab, port, "cold.log"),
      stdout: "null",
      stderr: "null",
    }).spawn();
    while (true) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/loginms`, {
          method: "POST",
          body: "{}",
        });
        await res.body?.cancel();
        if (res.status === 200) break;
      } catch { /* not yet */ }
      await new Promise((r) => setTimeout(r, 1));
    }
    times.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 2000));
    idle.push(
      Number(
        (await Deno.readTextFile(`/proc/${child.pid}/status`)).match(
          /VmRSS:\s+(\d+)/,
        )![1],
      ) / 1024,
    );
    child.kill("SIGTERM");
    await child.status;
  }
  return `Cold start to the first proxied 200 (\`deno task bench --cold ${runs}\`, deno run, modules cached): median ${
    fmt(median(times))
  } ms [${fmt(Math.min(...times))}–${
    fmt(Math.max(...times))
  }]; idle RSS 2 s later: median ${fmt(median(idle), 1)} MB.\n`;
}

async function soak(lab: Lab, seconds: number): Promise<string> {
  const proxy = await startProxy(lab, "gateway");
  const samples: [number, number][] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    const kb = Number(
      Deno.readTextFileSync(`/proc/${proxy.pid}/status`).match(/VmRSS:\s+(\d+)/)
        ?.[1] ?? 0,
    );
    samples.push([Math.round((Date.now() - started) / 1000), kb / 1024]);
  }, 10_000);
  try {
    const r = await wrk(lab, proxy.port, {
      name: "soak",
      conns: 8,
      path: "/api/loginms",
      lua: "small",
    }, seconds);
    clearInterval(sampler);
    const rss = samples.map(([, mb]) => mb);
    return `Soak: ${seconds} s of POST /api/loginms at 8 connections (\`deno task bench --soak ${seconds}\`): ${r.requests} requests, ${
      fmt(r.rps)
    } req/s, ${r.errors} errors, p99 ${
      fmt(r.p99, 2)
    } ms. RSS (MB) every 10 s: ${
      samples.map(([t, mb]) => `${t}s ${fmt(mb, 1)}`).join(", ")
    }. First/last/max: ${fmt(rss[0] ?? NaN, 1)} / ${
      fmt(rss.at(-1) ?? NaN, 1)
    } / ${fmt(Math.max(...rss), 1)}.\n`;
  } finally {
    clearInterval(sampler);
    await proxy.stop();
  }
}

/** Moved each way before a big-transfer measurement. */
const WARM_BYTES = 64 * 1024 ** 2;

/**
 * Streams `gib` GiB down and then up through a gateway with no body limit,
 * sampling its RSS every 200 ms: the bytes must flow, not pile up. The
 * upstream is a Deno server in this process (a 1 GiB answer from a stream,
 * a sink that counts the upload); curl is the client, uploading a sparse file.
 */
async function bigTransfers(lab: Lab, gib: number): Promise<string> {
  const size = gib * 1024 ** 3;
  const chunk = 64 * 1024;
  const bulk = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      if (req.method === "POST") {
        let n = 0;
        for await (const piece of req.body ?? []) n += piece.length;
        return new Response(String(n));
      }
      let left = new URL(req.url).pathname === "/warm" ? WARM_BYTES : size;
      const total = left;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const n = Math.min(chunk, left);
          left -= n;
          controller.enqueue(new Uint8Array(n));
          if (left === 0) controller.close();
        },
      }, { highWaterMark: 0 });
      return new Response(body, {
        headers: { "content-length": String(total) },
      });
    },
  );
  const sparse = `${lab.dir}/upload.bin`;
  const file = await Deno.open(sparse, { create: true, write: true });
  await file.truncate(size);
  file.close();
  const warmFile = `${lab.dir}/warm.bin`;
  await Deno.writeFile(warmFile, new Uint8Array(WARM_BYTES));
  const port = freePort();
  const args = gatewayArgs(lab, port, "gib-error.log");
  args[args.indexOf("--upstream") + 1] = `http://127.0.0.1:${bulk.addr.port}`;
  args[args.indexOf("--client-max-body-size") + 1] = "0";
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdout: "null",
    stderr: "null",
  }).spawn();
  const rssMb = () =>
    Number(
      Deno.readTextFileSync(`/proc/${child.pid}/status`).match(
        /VmRSS:\s+(\d+)/,
      )?.[1] ?? 0,
    ) / 1024;
  try {
    await waitReady(port, "/api/x", "POST");
    const phases: string[] = [];
    const curl = async (name: string, extra: string[], path: string) => {
      const before = rssMb();
      let peak = before;
      const sampler = setInterval(() => peak = Math.max(peak, rssMb()), 200);
      const started = performance.now();
      const out = await new Deno.Command("curl", {
        args: [
          "-s",
          "-o",
          "/dev/null",
          "-w",
          "%{http_code} %{size_download} %{size_upload}",
          ...extra,
          `http://127.0.0.1:${port}${path}`,
        ],
        stdout: "piped",
      }).output();
      clearInterval(sampler);
      const seconds = (performance.now() - started) / 1000;
      const [status, down, up] = new TextDecoder().decode(out.stdout).split(
        " ",
      );
      const bytes = Math.max(Number(down), Number(up));
      if (status !== "200" || bytes !== size) {
        throw new Error(`${name}: status ${status}, ${bytes} of ${size} bytes`);
      }
      phases.push(
        `${name} ${gib} GiB in ${fmt(seconds, 1)} s (${
          fmt(bytes / seconds / 1024 ** 2)
        } MiB/s): RSS ${fmt(before, 1)} MB before, peak ${fmt(peak, 1)}, ${
          fmt(rssMb(), 1)
        } after`,
      );
    };
    // Warm up first (64 MiB each way: JIT, heap, allocator), so "before"
    // is a gateway that has moved bytes, and growth is what 1 GiB adds.
    const fresh = rssMb();
    for (const extra of [[], ["-X", "POST", "-T", warmFile]]) {
      await new Deno.Command("curl", {
        args: [
          "-s",
          "-o",
          "/dev/null",
          ...extra,
          `http://127.0.0.1:${port}/api/warm`,
        ],
      }).output();
    }
    phases.push(
      `RSS ${fmt(fresh, 1)} MB at rest, ${
        fmt(rssMb(), 1)
      } after 64 MiB each way`,
    );
    await curl("download", [], "/api/gib");
    await curl("upload", ["-X", "POST", "-T", sparse], "/api/sink");
    const hwm = Number(
      (await Deno.readTextFile(`/proc/${child.pid}/status`)).match(
        /VmHWM:\s+(\d+)/,
      )?.[1] ?? 0,
    ) / 1024;
    return `Big transfers through the gateway (\`deno task bench --gib ${gib}\`, body limit off, RSS sampled every 200 ms): ${
      phases.join("; ")
    }; peak RSS of the whole run (VmHWM) ${fmt(hwm, 1)} MB.\n`;
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await bulk.shutdown();
  }
}

/** A flag's number, within `[min, max]`, or a clear error. */
function numberFlag(
  name: string,
  value: string,
  range: { min: number; max: number },
): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < range.min) {
    throw new Error(
      `Cannot parse --${name} "${value}": expected a number from ${range.min}`,
    );
  }
  return Math.min(n, range.max);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      rounds: { type: "string", default: "3" },
      seconds: { type: "string", default: "5" },
      warmup: { type: "string", default: "5" },
      only: { type: "string" },
      cold: { type: "string" },
      soak: { type: "string" },
      gib: { type: "string" },
      floor: { type: "boolean", default: false },
      locations: { type: "boolean", default: false },
      baseline: { type: "string" },
      pair: { type: "boolean", default: false },
    },
  });
  if (Deno.build.os !== "linux") {
    throw new Error(
      "The benchmark runs on Linux (taskset, /proc, Debian's packages).",
    );
  }
  // Flags are checked before anything is installed or started.
  const flag = (name: keyof typeof values, min: number, max: number) => {
    const value = values[name];
    return typeof value === "string"
      ? numberFlag(name, value, { min, max })
      : null;
  };
  const cold = flag("cold", 1, 100);
  const gib = flag("gib", 1, 8);
  const soakSeconds = flag("soak", 1, 3600);
  const options = {
    rounds: flag("rounds", 1, 50)!,
    seconds: flag("seconds", 1, 60)!,
    warmup: flag("warmup", 0, 60)!,
    only: values.only ? new Set(values.only.split(",")) : null,
    floor: values.floor === true,
    locations: values.locations === true,
    baseline: values.baseline ?? null,
  };
  if (values.pair === true && options.baseline === null) {
    throw new Error("Cannot run --pair: it needs --baseline REV");
  }
  await ensureTools();
  const lab = await setUp();
  if (options.baseline !== null) {
    lab.baseRoot = `${lab.dir}/baseline/`;
    const added = await run([
      "git",
      "-C",
      ROOT,
      "worktree",
      "add",
      "--detach",
      lab.baseRoot,
      options.baseline,
    ]);
    if (!added.ok) {
      throw new Error(
        `Cannot check out --baseline "${options.baseline}": ${added.err}`,
      );
    }
    lab.baseFlags = await baselineFlags(lab.baseRoot);
  }
  try {
    if (
      lab.baseRoot !== null &&
      SCENARIOS.some((s) =>
        s.gzip !== undefined && (options.only?.has(s.name) ?? true)
      )
    ) {
      lab.baseGzip = await baselineGzips(lab);
    }
    const report = cold !== null
      ? await coldStart(lab, cold)
      : gib !== null
      ? await bigTransfers(lab, gib)
      : soakSeconds !== null
      ? await soak(lab, soakSeconds)
      : values.pair === true
      ? await pairs(lab, options)
      : await compare(lab, options);
    Deno.stdout.writeSync(new TextEncoder().encode(report));
  } finally {
    lab.upstream.kill("SIGTERM");
    await lab.upstream.status;
    if (lab.baseRoot !== null) {
      await run([
        "git",
        "-C",
        ROOT,
        "worktree",
        "remove",
        "--force",
        lab.baseRoot,
      ]);
    }
    await Deno.remove(lab.dir, { recursive: true });
  }
}
