/**
 * nginx 1.22 and the gateway each run from its own prefix on the same
 * nginx.conf text (relative log paths land in each prefix's `logs/`), for
 * the side-by-side tests: `bothSides()` starts the pair, `logLines()`
 * reads what each wrote.
 */
import { join } from "node:path";
import { startMain } from "./_in_process.ts";
import { nginxArgs, nginxBinary, stopNginx } from "./_nginx.ts";
import { freePort, spawnGateway, waitFor } from "./_utils.ts";
import { type NginxPrefix, nginxPrefix } from "./_prefix.ts";
import {
  type FastcgiResponder,
  startFastcgiResponder,
} from "./_fastcgi_responder.ts";

/** nginx as a foreground process, its temp folders in its prefix. */
export const PROCESS = "daemon off;\nmaster_process off;\n";
/** nginx's temp folders in its prefix (the gateway ignores them). */
export const TEMP = [
  "client_body_temp_path temp/body;",
  "proxy_temp_path temp/proxy;",
  "fastcgi_temp_path temp/fastcgi;",
  "uwsgi_temp_path temp/uwsgi;",
  "scgi_temp_path temp/scgi;",
].map((l) => `  ${l}`).join("\n");

/** A prefix with `conf/nginx.conf`, `logs/` and `temp/`, removed at the end. */
export function prefixWith(text: string): Promise<NginxPrefix> {
  return nginxPrefix(text, {
    name: "same-conf-nginx-",
    dirs: ["conf", "logs", "temp"],
  });
}

/** Prefixes written ahead, by the `prepare` that wrote their files. */
const ahead = new Map<(prefix: string) => void, string[]>();
let removesAhead = false;

/**
 * Writes the prefixes of a test's {@linkcode bothSides} call now, each
 * with the files `prepare` writes, for the call given the same `prepare`
 * to take (one per side). The gateway proves a file inside its root only
 * once the folders on its path have been still for a moment, and Deno
 * reports a folder's change time in whole seconds, which counts as the end
 * of that second (`src/static/settled_proof.ts`): a root written just
 * before a request waited up to a second. Called when a test file loads
 * (in a shard, before any of its tests run); the prefixes no test took are
 * removed when the worker unloads.
 *
 * @param prepare Writes a side's files, synchronously.
 */
export function bothSidesAhead(prepare: (prefix: string) => void): void {
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
  const made = ahead.get(prepare) ?? [];
  for (const _side of ["nginx", "gateway"]) {
    const prefix = Deno.makeTempDirSync({ prefix: "same-conf-nginx-" });
    for (const dir of ["conf", "logs", "temp"]) {
      Deno.mkdirSync(join(prefix, dir));
    }
    prepare(prefix);
    made.push(prefix);
  }
  ahead.set(prepare, made);
}

/**
 * A side's prefix: one written ahead for `prepare` with its nginx.conf
 * written now, else a new one prepared now.
 */
async function sidePrefix(
  text: string,
  prepare: BothSidesOptions["prepare"],
): Promise<NginxPrefix> {
  const prefix = prepare === undefined ? undefined : ahead.get(prepare)?.pop();
  if (prefix === undefined) {
    const made = await prefixWith(text);
    try {
      await prepare?.(made.prefix);
    } catch (error) {
      await made[Symbol.asyncDispose]();
      throw error;
    }
    return made;
  }
  const conf = join(prefix, "conf", "nginx.conf");
  await Deno.writeTextFile(conf, text);
  return {
    prefix,
    conf,
    [Symbol.asyncDispose]: () => Deno.remove(prefix, { recursive: true }),
  };
}

/** Runs nginx on a prefix's configuration until disposed. */
export async function runNginx(
  prefix: string,
  conf: string,
): Promise<AsyncDisposable> {
  const pid = join(prefix, "nginx.pid");
  const child = new Deno.Command(await nginxBinary(), {
    args: nginxArgs({
      prefix,
      conf,
      errorLog: join(prefix, "logs", "early.log"),
      pid,
    }),
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const stop = async () => {
    await stopNginx(child);
    return await stderr;
  };
  try {
    await waitFor(() => {
      try {
        Deno.statSync(pid);
        return true;
      } catch {
        return false;
      }
    }, 5000);
  } catch (error) {
    throw new Error(`nginx did not start: ${await stop()}`, { cause: error });
  }
  return { [Symbol.asyncDispose]: async () => void await stop() };
}

/** The lines of a file in a prefix's `logs/`; none when it does not exist. */
export function logLines(prefix: string, name: string): string[] {
  try {
    return Deno.readTextFileSync(join(prefix, "logs", name)).split("\n")
      .filter((l) => l !== "");
  } catch {
    return [];
  }
}

/** Which of the two runs a configuration is written for. */
export type SideName = "nginx" | "gateway";

/** One side of {@linkcode bothSides}: where it listens, its prefix. */
export interface Side {
  /** Its first port on 127.0.0.1 (`ports[0]`). */
  port: number;
  /** All its ports, as many as `ports` asked for. */
  ports: readonly number[];
  /** Its prefix folder (`logs/` in it). */
  prefix: string;
  /** Its `conf/nginx.conf`. */
  conf: string;
}

/** nginx and the gateway running, each on its own ports and prefix. */
export interface BothSides extends AsyncDisposable {
  /** nginx 1.22. */
  nginx: Side;
  /** The gateway. */
  gateway: Side;
}

/** Options of {@linkcode bothSides}. */
export interface BothSidesOptions {
  /** Free ports per side, handed to the configuration. Default 1. */
  ports?: number;
  /**
   * Writes files into a side's prefix before either side starts; not
   * called again for a prefix written ahead with it
   * ({@linkcode bothSidesAhead}).
   */
  prepare?(prefix: string): Promise<void> | void;
  /**
   * The gateway as its own process (`spawnGateway`), where the process is
   * what is proven; default in this process (`startMain`).
   */
  process?: boolean;
}

/**
 * Starts nginx 1.22 and the gateway on the same nginx.conf, each from its
 * own prefix and on its own free ports: nginx first, then the gateway.
 * Disposing stops the gateway, then nginx, then removes both prefixes.
 *
 * @param conf The nginx.conf for a side's port (and all its ports); the
 * side's name, for what each side needs of its own (an upstream each).
 * @param options How many ports, files written first, a gateway process.
 * @returns Both sides' ports and prefixes.
 * @throws When a side does not start (both are stopped first).
 *
 * @example Usage
 * ```ts ignore
 * await using sides = await bothSides((port) => `${PROCESS}events {}
 * http {
 * ${TEMP}
 *   server { listen 127.0.0.1:${port}; return 204; }
 * }
 * `);
 * for (const { port } of [sides.nginx, sides.gateway]) {
 *   await rawRequest(port, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
 * }
 * logLines(sides.nginx.prefix, "access.log");
 * ```
 */
export async function bothSides(
  conf: (port: number, side: SideName, ports: readonly number[]) => string,
  options: BothSidesOptions = {},
): Promise<BothSides> {
  await using stack = new AsyncDisposableStack();
  // Every port of both sides distinct: freePort() draws at random, and two
  // equal draws would merge two servers or refuse the second side's start.
  const taken = new Set<number>();
  const draw = (): number => {
    for (let i = 0; i < 100; i++) {
      const port = freePort();
      if (!taken.has(port)) return taken.add(port), port;
    }
    throw new Error("Cannot draw distinct free ports: 100 draws repeated");
  };
  const side = async (name: SideName): Promise<Side> => {
    const ports = Array.from({ length: options.ports ?? 1 }, draw);
    const made = stack.use(
      await sidePrefix(conf(ports[0]!, name, ports), options.prepare),
    );
    return { port: ports[0]!, ports, prefix: made.prefix, conf: made.conf };
  };
  const nginx = await side("nginx");
  const gateway = await side("gateway");
  stack.use(await runNginx(nginx.prefix, nginx.conf));
  const args = ["--nginx-conf", gateway.conf];
  stack.use(await (options.process ? spawnGateway(args) : startMain(args)));
  const running = stack.move();
  return {
    nginx,
    gateway,
    [Symbol.asyncDispose]: () => running.disposeAsync(),
  };
}

/** Each side's HTTP upstream and FastCGI application. */
export interface SideUpstreams<U extends AsyncDisposable>
  extends AsyncDisposable {
  /** nginx's. */
  nginx: { http: U; fastcgi: FastcgiResponder };
  /** The gateway's. */
  gateway: { http: U; fastcgi: FastcgiResponder };
}

/**
 * An HTTP upstream and a FastCGI application for each side, so what each
 * side's upstreams received is compared apart; all four closed together.
 *
 * @param http Starts one side's HTTP upstream.
 * @returns The four servers.
 */
export function sideUpstreams<U extends AsyncDisposable>(
  http: (side: SideName) => U,
): SideUpstreams<U> {
  const nginx = { http: http("nginx"), fastcgi: startFastcgiResponder() };
  const gateway = { http: http("gateway"), fastcgi: startFastcgiResponder() };
  return {
    nginx,
    gateway,
    async [Symbol.asyncDispose]() {
      await Promise.all(
        [nginx.http, nginx.fastcgi, gateway.http, gateway.fastcgi].map((s) =>
          s[Symbol.asyncDispose]()
        ),
      );
    },
  };
}
