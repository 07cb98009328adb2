/**
 * An nginx prefix folder for a test: a temporary folder with `conf/` and
 * `logs/` (or the folders the test names) and `conf/nginx.conf` holding the
 * test's text, removed when disposed. nginx and the gateway resolve
 * `logs/…` and `html` from it, as they do from `C:\nginx` on a station.
 */
import { join } from "node:path";

/** A prefix folder and its nginx.conf, removed when disposed. */
export interface NginxPrefix extends AsyncDisposable {
  /** The folder. */
  prefix: string;
  /** `conf/nginx.conf` in it. */
  conf: string;
}

/** Options of {@linkcode nginxPrefix}. */
export interface NginxPrefixOptions {
  /** The temporary folder's name starts with it. */
  name?: string;
  /** The folders made in it (`conf` always is). Default `conf`, `logs`. */
  dirs?: readonly string[];
}

/**
 * Makes a prefix folder and writes its `conf/nginx.conf`.
 *
 * @param text The nginx.conf, or a function of the prefix's path giving it.
 * @param options The folder's name and the folders made in it.
 * @returns The folder and the file's path; disposing removes the folder.
 */
export async function nginxPrefix(
  text: string | ((prefix: string) => string),
  options: NginxPrefixOptions = {},
): Promise<NginxPrefix> {
  const prefix = await Deno.makeTempDir(
    options.name === undefined ? {} : { prefix: options.name },
  );
  for (const dir of new Set(["conf", ...options.dirs ?? ["conf", "logs"]])) {
    await Deno.mkdir(join(prefix, dir));
  }
  const conf = join(prefix, "conf", "nginx.conf");
  await Deno.writeTextFile(
    conf,
    typeof text === "string" ? text : text(prefix),
  );
  return {
    prefix,
    conf,
    [Symbol.asyncDispose]: () => Deno.remove(prefix, { recursive: true }),
  };
}

/**
 * Whether a path exists now (a log file that rotation makes or renames).
 *
 * @param path The file or folder.
 * @returns `true` when `stat` finds it.
 */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A temporary folder, removed when disposed. */
export interface TempDir extends AsyncDisposable {
  /** The folder. */
  path: string;
}

/**
 * Makes a temporary folder that `await using` removes.
 *
 * @param name The folder's name starts with it.
 * @returns The folder.
 */
export async function tempDir(name?: string): Promise<TempDir> {
  const path = await Deno.makeTempDir(
    name === undefined ? {} : { prefix: name },
  );
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }),
  };
}
