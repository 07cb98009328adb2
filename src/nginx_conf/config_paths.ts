/**
 * The folders a compiled configuration reads from and writes into, so the
 * scheduled task's account can be granted exactly those: every server's and
 * location's `root` and `alias` (`if` blocks too), the folders of its
 * `auth_basic_user_file`s, certificates and keys and of every file the
 * configuration was read from, and the folders of every access and error
 * log file opened at start.
 *
 * @module
 */

import { posix, win32 } from "node:path";
import type { ComplexValue, HttpConf, LocationConf } from "../engine/mod.ts";
import { prefixed } from "./paths.ts";

/** The folders a configuration uses, absolute, each once, first seen first. */
export interface ConfigPaths {
  /** Folders read: roots, aliases, and where read files sit. */
  read: string[];
  /** Folders written: where log files sit. */
  write: string[];
  /**
   * Paths that start with a variable (`root $document;`), as written: no
   * folder can be known before a request.
   */
  unknown: string[];
}

/** A Windows path (`C:\x`, `C:/x`, `\\server\share`), else POSIX. */
function pathApi(path: string): typeof win32 | typeof posix {
  return /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\")
    ? win32
    : posix;
}

/** The folder itself, without a trailing separator (a root stays). */
function folderOf(path: string): string {
  const api = pathApi(path);
  const trimmed = path.replace(/[\\/]+$/, "");
  return trimmed === "" || api.parse(path).root === path ? path : trimmed;
}

/** The folder a file sits in. */
function parentOf(path: string): string {
  return pathApi(path).dirname(path);
}

/**
 * The folder a path value names, resolved against `prefix` as the engine
 * resolves it. With variables, the folder of its constant head (`/srv/` of
 * `/srv/$host`, `/srv` of `/srv/site_$host`): everything the value can
 * become lies below it. `null` when it starts with a variable.
 */
function valueFolder(
  prefix: string,
  value: ComplexValue,
  kind: "folder" | "file",
): string | null {
  if (value.constant !== null) {
    const path = prefixed(prefix, value.constant);
    return kind === "folder" ? folderOf(path) : parentOf(path);
  }
  const head = value.text.slice(0, value.text.indexOf("$"));
  if (head === "") return null;
  const path = prefixed(prefix, head);
  return /[\\/]$/.test(path) ? folderOf(path) : parentOf(path);
}

/** Every level of a server: its own, named, nested and `if` locations. */
function* levels(location: LocationConf): Generator<LocationConf> {
  yield location;
  for (const op of location.rewrite?.ops ?? []) {
    if (op.op === "if") yield* levels(op.location);
  }
  const index = location.locations;
  for (
    const inner of [
      ...index.exact.values(),
      ...index.prefixes,
      ...index.regexes,
    ]
  ) {
    yield* levels(inner);
  }
}

/**
 * The folders a compiled configuration reads from and writes into, as the
 * gateway resolves its paths (nginx's prefix rules, `paths.ts`). A folder
 * is named once (without regard to case on Windows paths); one written is
 * not named again as read.
 *
 * @param conf The compiled configuration.
 * @param files The files it was read from (the nginx.conf and its includes).
 * @returns The folders.
 *
 * @example Usage
 * ```ts
 * import { configPaths, loadNginxConf } from "./mod.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const io = {
 *   readTextFile: () =>
 *     "http { server { listen 80; root /srv/$host; access_log /var/log/a.log; } }",
 *   readDirFiles: () => [],
 * };
 * const loaded = loadNginxConf("/n/conf/nginx.conf", io);
 * if (!loaded.ok) throw new Error(loaded.message);
 * deepStrictEqual(configPaths(loaded.engine, loaded.files), {
 *   read: ["/n/conf", "/srv"],
 *   write: ["/var/log", "/n/logs"],
 *   unknown: [],
 * });
 * ```
 */
export function configPaths(
  conf: HttpConf,
  files: readonly string[] = [],
): ConfigPaths {
  const out: ConfigPaths = { read: [], write: [], unknown: [] };
  const seen = new Set<string>();
  const add = (list: string[], folder: string | null, text = "") => {
    if (folder === null) {
      if (!out.unknown.includes(text)) out.unknown.push(text);
      return;
    }
    const key = pathApi(folder) === win32 ? folder.toLowerCase() : folder;
    if (seen.has(`${list === out.read ? "r" : "w"} ${key}`)) return;
    seen.add(`${list === out.read ? "r" : "w"} ${key}`);
    list.push(folder);
  };
  for (const file of files) add(out.read, parentOf(file));
  for (const server of conf.servers) {
    const all = [server.conf, ...server.named.values()];
    for (const location of all.flatMap((l) => [...levels(l)])) {
      for (const path of [location.root, location.alias]) {
        if (path === null) continue;
        add(out.read, valueFolder(conf.prefix, path, "folder"), path.text);
      }
      const auth = location.authBasic;
      if (auth !== null) {
        const folder = valueFolder(auth.confPrefix, auth.userFile, "file");
        add(out.read, folder, auth.userFile.text);
      }
    }
    if (server.ssl !== undefined) {
      add(out.read, parentOf(server.ssl.certificate));
      add(out.read, parentOf(server.ssl.certificateKey));
    }
  }
  for (const file of [...conf.accessLogFiles, ...conf.errorLogFiles]) {
    if (file !== "stderr") add(out.write, parentOf(file));
  }
  // A folder written is read too (icacls' M holds RX).
  const written = new Set(
    out.write.map((f) => pathApi(f) === win32 ? f.toLowerCase() : f),
  );
  out.read = out.read.filter((f) =>
    !written.has(pathApi(f) === win32 ? f.toLowerCase() : f)
  );
  return out;
}
