/**
 * Runs a real nginx (Debian's, installed by scripts/install_test_deps.sh)
 * on loopback with a generated configuration, for the side-by-side suite.
 *
 * @module
 */

import {
  finalStatus,
  maskAccessLine,
  onFreePort,
  rawRequest,
  type TestGateway,
  waitFor,
} from "./_utils.ts";

/** Settings mirrored from the gateway's. */
export interface NginxSettings {
  /** `server` lines of the `upstream backend {}` block. */
  servers: string[];
  /** e.g. `400ms`. */
  timeouts?: { connect?: string; send?: string; read?: string };
  /** `client_max_body_size`. */
  clientMaxBodySize?: string;
  /** More directives for the `http {}` block, e.g. `log_format ...;`. */
  httpLines?: string[];
  /** More directives for the `server {}` block, e.g. `error_page ...;`. */
  serverLines?: string[];
  /**
   * Files written into the `root` folder before nginx starts; the same
   * files given to {@linkcode htmlAhead} when the test file loads take a
   * folder written then.
   */
  files?: HtmlFiles;
  /** Pass WebSocket upgrades (`proxy_http_version 1.1` and the headers). */
  websocket?: boolean;
}

/** A running nginx. */
export interface NginxProcess extends AsyncDisposable {
  port: number;
  /** The `root` folder of `location /`. */
  root: string;
  errorLines(): string[];
  accessLines(): string[];
}

/** Finds nginx, installing it from Debian's archive when missing. */
export async function nginxBinary(): Promise<string> {
  for (const path of ["/usr/sbin/nginx", "/usr/bin/nginx"]) {
    try {
      await Deno.stat(path);
      return path;
    } catch { /* not here */ }
  }
  const script = new URL("../scripts/install_test_deps.sh", import.meta.url)
    .pathname;
  const out = await new Deno.Command("bash", { args: [script] }).output();
  if (!out.success) {
    throw new Error(
      `nginx is needed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return "/usr/sbin/nginx";
}

/** Where one nginx keeps what it would otherwise put in Debian's paths. */
export interface NginxPaths {
  /** The prefix (`-p`): relative paths in the configuration start here. */
  prefix: string;
  /** The configuration file (`-c`). */
  conf: string;
  /** The error log before the configuration is read (`-e`). */
  errorLog: string;
  /** The pid file, given with `-g` so no configuration needs a `pid` line. */
  pid: string;
}

/**
 * nginx's command line for one test's own nginx. Debian's nginx is built
 * with `/run/nginx.pid`, which even `nginx -t` creates (to prove it can:
 * `ngx_init_cycle()`), so without its own pid path a non-root run fails and
 * root runs share one file. A configuration given here must not set `pid`
 * itself (nginx would refuse the duplicate).
 *
 * @param paths The prefix, configuration, early error log and pid file.
 * @param test `nginx -t -q` rather than a run.
 * @returns The arguments.
 */
export function nginxArgs(paths: NginxPaths, test = false): string[] {
  const prefix = paths.prefix.endsWith("/") ? paths.prefix : `${paths.prefix}/`;
  return [
    ...(test ? ["-t", "-q"] : []),
    "-p",
    prefix,
    "-c",
    paths.conf,
    "-e",
    paths.errorLog,
    "-g",
    `pid ${paths.pid};`,
  ];
}

/**
 * What `nginx -t` says of a configuration file in a prefix (its standard
 * error), with the test's own early error log and pid path.
 *
 * @param paths The prefix, the file, and optionally the early log and the
 * pid file (`logs/error.log`, `nginx.pid` in the prefix by default).
 * @returns nginx's standard error.
 */
export async function nginxTestOutput(
  paths: Pick<NginxPaths, "prefix" | "conf"> & Partial<NginxPaths>,
): Promise<string> {
  const out = await new Deno.Command(await nginxBinary(), {
    args: nginxArgs({
      errorLog: `${paths.prefix}/logs/error.log`,
      pid: `${paths.prefix}/nginx.pid`,
      ...paths,
    }, true),
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  return new TextDecoder().decode(out.stderr);
}

/**
 * Stops an nginx the test started (`daemon off`, `master_process off`):
 * SIGTERM, sent again every 100 ms until it exits, SIGKILL past `boundMs`.
 * A SIGTERM that lands after nginx writes its pid file but before its first
 * `epoll_wait` is only looked at after the next event
 * (ngx_single_process_cycle), and an nginx with no client and no timer has
 * none: it would wait for ever (seen in 28 of 40 stops sent as soon as the
 * pid file appeared). One sent during the wait interrupts it.
 *
 * @param child The nginx process.
 * @param boundMs How long SIGTERM is given.
 */
export async function stopNginx(
  child: Deno.ChildProcess,
  boundMs = 3000,
): Promise<void> {
  let exited = false;
  const status = child.status.then(() => {
    exited = true;
  });
  for (let waited = 0; !exited && waited < boundMs; waited += 100) {
    try {
      child.kill("SIGTERM");
    } catch { /* exited meanwhile */ }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      status,
      new Promise<void>((resolve) => timer = setTimeout(resolve, 100)),
    ]);
    clearTimeout(timer);
  }
  if (!exited) {
    try {
      child.kill("SIGKILL");
    } catch { /* exited meanwhile */ }
  }
  await status;
}

function lines(path: string): string[] {
  try {
    return Deno.readTextFileSync(path).split("\n").filter((l) => l !== "");
  } catch {
    return [];
  }
}

/**
 * Starts nginx configured as the gateway: `location /api/ { proxy_pass
 * http://<server>/; }` (or an `upstream backend {}` block for several
 * servers), `server_name localhost`, the default (pre-1.29.7) upstream
 * handling, error log at `info`.
 */
export async function startNginx(
  settings: NginxSettings,
): Promise<NginxProcess> {
  const binary = await nginxBinary();
  const dir = takeAhead(settings.files) ??
    writeSite("nginx-compat-", settings.files);
  return await onFreePort(async (port) => {
    await Deno.writeTextFile(
      `${dir}/nginx.conf`,
      compatConf(settings, dir, port),
    );
    return await launch(binary, dir, port);
  });
}

/** {@linkcode startNginx}'s nginx.conf. */
function compatConf(
  settings: NginxSettings,
  dir: string,
  port: number,
): string {
  const t = settings.timeouts ?? {};
  // One plain server is written as the stations write it (proxy_pass
  // http://127.0.0.1:8080/, so Host is host:port); several need a block.
  const single = settings.servers.length === 1 &&
    !settings.servers[0]!.includes(" ");
  const target = single ? settings.servers[0]! : "backend";
  const block = single
    ? ""
    : `  upstream backend {\n${
      settings.servers.map((s) => `    server ${s};`).join("\n")
    }\n  }`;
  return `${confHead(dir)}
  proxy_connect_timeout ${t.connect ?? "60s"};
  proxy_send_timeout ${t.send ?? "60s"};
  proxy_read_timeout ${t.read ?? "60s"};
  client_max_body_size ${settings.clientMaxBodySize ?? "1m"};
${block}
${(settings.httpLines ?? []).map((l) => `  ${l}`).join("\n")}
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    location /api/ {
      proxy_pass http://${target}/;${
    settings.websocket
      ? `
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";`
      : ""
  }
    }
    location / { root ${dir}/html; }
${(settings.serverLines ?? []).map((l) => `    ${l}`).join("\n")}
  }
}
`;
}

/** A site for {@linkcode startNginxSite}. */
export interface NginxSite {
  /** Directives of the `http {}` level (`include`, `default_type`, `gzip_vary`). */
  http?: string[];
  /**
   * The `server {}` block's contents; `$HTML` stands for the folder the
   * files are written to.
   */
  server: string;
  /**
   * Files written below `$HTML` (folders made as needed) before nginx
   * starts; the same files given to {@linkcode htmlAhead} when the test
   * file loads take a folder written then.
   */
  files?: HtmlFiles;
}

/**
 * Starts nginx with one server of the caller's own directives on
 * 127.0.0.1 (`server_name localhost`), the error log at `info`, for
 * side-by-side cases of any directive.
 *
 * @param site The directives and files.
 * @returns The running nginx; its `root` is `$HTML`.
 */
export async function startNginxSite(site: NginxSite): Promise<NginxProcess> {
  const binary = await nginxBinary();
  const dir = takeAhead(site.files) ?? writeSite("nginx-site-", site.files);
  const html = `${dir}/html`;
  return await onFreePort(async (port) => {
    const conf = `${confHead(dir)}
${(site.http ?? []).map((l) => `  ${l}`).join("\n")}
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
${site.server.replaceAll("$HTML", html)}
  }
}
`;
    await Deno.writeTextFile(`${dir}/nginx.conf`, conf);
    return await launch(binary, dir, port);
  });
}

/**
 * What a test's nginx serves below its `root` (`$HTML`): each name's text or
 * bytes, or a symbolic link (`$HTML` in its target stands for the folder);
 * folders are made as needed.
 */
export type HtmlFiles = Readonly<
  Record<string, string | Uint8Array | { symlink: string }>
>;

/** Site folders written ahead, by what they hold ({@linkcode filesKey}). */
const ahead = new Map<string, string[]>();
let removesAhead = false;

/**
 * Writes a site folder (`html/` and its files) for each of `files` now, for
 * {@linkcode startNginxSite} and {@linkcode startNginx} given the same
 * files to take. The gateway proves a file inside its root only once the
 * folders on its path have been still for a moment, and Deno reports a
 * folder's change time in whole seconds, which counts as the end of that
 * second (`src/static/settled_proof.ts`): a root written just before a
 * request waited up to a second. Called when a test file loads (in a
 * shard, before any of its tests run); the folders no test took are removed
 * when the worker unloads.
 *
 * @param files One entry per site the file's tests start (the same files
 * twice for two sites); a site is taken by what it holds.
 */
export function htmlAhead(files: readonly HtmlFiles[]): void {
  if (!removesAhead) {
    removesAhead = true;
    globalThis.addEventListener("unload", () => {
      for (const dir of [...ahead.values()].flat()) {
        try {
          Deno.removeSync(dir, { recursive: true });
        } catch {
          // Removed already.
        }
      }
      ahead.clear();
    });
  }
  for (const set of files) {
    const key = filesKey(set);
    ahead.set(key, [...(ahead.get(key) ?? []), writeSite("nginx-site-", set)]);
  }
}

/** A site folder written ahead with `files`, taken (once). */
function takeAhead(files: HtmlFiles = {}): string | undefined {
  return ahead.size === 0 ? undefined : ahead.get(filesKey(files))?.pop();
}

/** Names what a site holds, so a test's own copy of its files finds it. */
function filesKey(files: HtmlFiles): string {
  return JSON.stringify(
    Object.entries(files).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
      .map(([name, data]) =>
        typeof data === "string"
          ? [name, data]
          : data instanceof Uint8Array
          ? [name, [...data]]
          : [name, { symlink: data.symlink }]
      ),
  );
}

/** Writes a new site folder: `html/` and its files. */
function writeSite(prefix: string, files: HtmlFiles | undefined): string {
  const dir = Deno.makeTempDirSync({ prefix });
  const html = `${dir}/html`;
  Deno.mkdirSync(html);
  for (const [name, data] of Object.entries(files ?? {})) {
    const path = `${html}/${name}`;
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    if (typeof data === "string") Deno.writeTextFileSync(path, data);
    else if (data instanceof Uint8Array) Deno.writeFileSync(path, data);
    else Deno.symlinkSync(data.symlink.replaceAll("$HTML", html), path);
  }
  return dir;
}

/**
 * The start of a test's nginx.conf, up to inside `http {`: one foreground
 * process, its logs and temporary folders in `dir`.
 */
function confHead(dir: string): string {
  return `
daemon off;
master_process off;
worker_processes 1;
error_log ${dir}/error.log info;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log combined;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;`;
}

/** Runs nginx on the configuration written in `dir` until disposed. */
async function launch(
  binary: string,
  dir: string,
  port: number,
): Promise<NginxProcess> {
  const child = new Deno.Command(binary, {
    args: nginxArgs({
      prefix: dir,
      conf: `${dir}/nginx.conf`,
      errorLog: `${dir}/error.log`,
      pid: `${dir}/nginx.pid`,
    }),
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let exited = false;
  child.status.then(() => exited = true);
  try {
    // nginx writes its pid file once it listens (ngx_create_pidfile() after
    // ngx_init_cycle()); a port taken ends it after its five bind() tries.
    await waitFor(() => {
      try {
        Deno.statSync(`${dir}/nginx.pid`);
        return true;
      } catch {
        return exited;
      }
    }, 10_000);
    if (exited) throw new Error("nginx exited");
  } catch (error) {
    await stopNginx(child);
    const log = lines(`${dir}/error.log`).join("\n");
    // A retry on another port starts from empty logs.
    for (const name of ["error.log", "access.log", "nginx.pid"]) {
      await Deno.remove(`${dir}/${name}`).catch(() => {});
    }
    throw new Error(`nginx did not start: ${await stderr}${log}`, {
      cause: error,
    });
  }
  return {
    port,
    root: `${dir}/html`,
    errorLines: () => lines(`${dir}/error.log`),
    accessLines: () => lines(`${dir}/access.log`),
    async [Symbol.asyncDispose]() {
      await stopNginx(child);
      await stderr;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * Starts nginx with one `server {}` of the test's own (`listen` and
 * `server_name localhost` are added), beside `http` lines such as
 * `upstream {}` blocks; error log at `info`, access log `combined`.
 */
export function startNginxServer(
  options: { http?: string; server: string },
): Promise<NginxProcess> {
  return startNginxSite({
    ...(options.http === undefined ? {} : { http: [options.http] }),
    server: options.server,
  });
}

/** What one side of a side-by-side run answered and logged. */
export interface SideRun {
  /** Each request's final status code. */
  statuses: string[];
  /** The error-log lines the test chose, as it chose them. */
  errors: string[];
  /** The access lines, time and body bytes masked. */
  access: string[];
  /** The access lines as written. */
  rawAccess: string[];
}

/**
 * Sends each request on its own connection to a port, one after another.
 *
 * @returns Each response's final status code.
 */
export async function sendEach(
  port: number,
  requests: readonly string[],
  timeoutMs: number,
): Promise<string[]> {
  const statuses = [];
  for (const r of requests) {
    statuses.push(finalStatus(await rawRequest(port, r, timeoutMs)));
  }
  return statuses;
}

/**
 * Waits until each side has an access line per answered request (at most
 * 5 s), then reads what both logged.
 *
 * @param statuses What each side answered, from {@linkcode sendEach}.
 * @param lines Which error-log lines to keep, masked.
 */
export async function bothLogged(
  nginx: NginxProcess,
  gw: TestGateway,
  statuses: { nginx: string[]; gateway: string[] },
  lines: (lines: string[]) => string[],
): Promise<{ nginx: SideRun; gateway: SideRun }> {
  await waitFor(
    () =>
      nginx.accessLines().length >= statuses.nginx.length &&
      gw.accessLines.length >= statuses.gateway.length,
    5000,
  );
  const side = (s: string[], errors: string[], access: string[]) => ({
    statuses: s,
    errors: lines(errors),
    access: access.map(maskAccessLine),
    rawAccess: access,
  });
  return {
    nginx: side(statuses.nginx, nginx.errorLines(), nginx.accessLines()),
    gateway: side(statuses.gateway, gw.errorLines, gw.accessLines),
  };
}
