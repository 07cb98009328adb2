/**
 * The folders a scheduled task's account needs and the `icacls` commands
 * that grant and take back that access: read on the executables', the
 * configuration's and the client app's folders (and whatever else an
 * nginx.conf reads), write on the logs' and the request body temp folder.
 * Nothing more: LOCAL SERVICE has no other rights there by default.
 *
 * @module
 */

import { isAbsolute, win32 } from "node:path";
import {
  type CliOptions,
  DEFAULT_SETTINGS,
  type FileInput,
  parseCliArgs,
  parseConfigFile,
  type SettingsInput,
} from "../config/mod.ts";
import {
  type ConfigPaths,
  configPaths,
  loadNginxConf,
  type NginxSettings,
} from "../nginx_conf/mod.ts";
import { serviceAccountSid, splitWindowsArgs } from "./scheduled_task.ts";

/** The settings that name folders, as the task will run with them. */
export interface TaskFolders {
  /** The executable's folder (relative paths start there). */
  base: string;
  /** From the flags, then the JSON config file, then nginx.conf. */
  layers: (SettingsInput | FileInput)[];
  /** `--config` or `--nginx-conf`, if given. */
  configFiles: string[];
  /** What the nginx.conf's servers and locations use, if one is given. */
  nginxConf?: ConfigPaths;
}

/**
 * The folders the task's account needs, each once (without regard to
 * case), read before write: the executables' folder, the configuration
 * files' folders and the client app's root (read), the error and access
 * logs' folders and the request body temp folder (write), and what an
 * nginx.conf's servers and locations read and write. A folder written is
 * not granted read as well: write (`M`) holds read.
 *
 * @param folders The base folder, the settings and the config files.
 * @returns The grants.
 *
 * @example Usage
 * ```ts
 * import { folderGrants } from "./task_grants.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(folderGrants({ base: "C:\\S", layers: [], configFiles: [] }), [
 *   { folder: "C:\\S", access: "read" },
 *   { folder: "C:\\S\\html", access: "read" },
 *   { folder: "C:\\S\\logs", access: "write" },
 *   { folder: "C:\\S\\client_body_temp", access: "write" },
 * ]);
 * ```
 */
export function folderGrants(folders: TaskFolders): FolderGrant[] {
  const pick = (
    key: "root" | "errorLog" | "accessLog" | "clientBodyTempPath",
  ): string | undefined => {
    for (const layer of folders.layers) {
      if (layer[key] !== undefined) return layer[key];
    }
    return DEFAULT_SETTINGS[key];
  };
  const abs = (p: string) =>
    win32.resolve(folders.base, p.replaceAll("/", "\\"));
  const read = [
    folders.base,
    ...folders.configFiles.map((f) => win32.dirname(abs(f))),
    abs(pick("root") ?? "html"),
    ...(folders.nginxConf?.read ?? []).map(abs),
  ];
  const write = [pick("errorLog"), pick("accessLog")]
    .filter((p): p is string => p !== undefined && p !== "off" && p !== "")
    .map((p) => win32.dirname(abs(p)))
    .concat(
      abs(pick("clientBodyTempPath") ?? "client_body_temp"),
      ...(folders.nginxConf?.write ?? []).map(abs),
    );
  const written = new Set(write.map((f) => f.toLowerCase()));
  const grants: FolderGrant[] = [];
  const seen = new Set<string>();
  for (const [access, list] of [["read", read], ["write", write]] as const) {
    for (const folder of list) {
      const key = `${access} ${folder.toLowerCase()}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (access === "read" && written.has(folder.toLowerCase())) continue;
      grants.push({ folder, access });
    }
  }
  return grants;
}

/** What an account may do in a folder the gateway uses. */
export type FolderAccess = "read" | "write";

/** One folder and the access the task's account needs there. */
export interface FolderGrant {
  /** An absolute Windows path. */
  folder: string;
  /** `read`: the app, the configuration, the executables; `write`: logs. */
  access: FolderAccess;
}

/**
 * icacls' name for an account: `*SID` for a built-in one (locale-proof:
 * "LOCAL SERVICE" is "LOKALER DIENST" on a German Windows), else the name.
 */
function icaclsAccount(user: string): string {
  const sid = serviceAccountSid(user);
  return sid === null ? user : `*${sid}`;
}

/** The `icacls` invocations for the task's folder grants. */
export const ICACLS = {
  /**
   * Grants an account access to a folder and what it holds, now and
   * later (`(OI)(CI)`: inherited by files and subfolders). Read is `RX`;
   * write is `M` (modify), because log rotation renames and deletes files,
   * which plain `W` does not allow.
   *
   * @param grant The folder and access.
   * @param user The account.
   * @returns The arguments for `icacls`.
   */
  grant(grant: FolderGrant, user: string): string[] {
    const rights = grant.access === "read" ? "RX" : "M";
    return [
      grant.folder,
      "/grant",
      `${icaclsAccount(user)}:(OI)(CI)${rights}`,
    ];
  },
  /**
   * Removes every access the account was granted on the folder.
   *
   * @param folder The folder.
   * @param user The account.
   * @returns The arguments for `icacls`.
   */
  remove(folder: string, user: string): string[] {
    return [folder, "/remove:g", icaclsAccount(user)];
  },
} as const;

/**
 * Reads the nginx.conf a task will run from, now: a file the gateway would
 * refuse fails the install, not the next boot. The path must be absolute:
 * a relative one would be read from the working directory here and from the
 * executable's folder when the task runs.
 *
 * @param path The `--nginx-conf` path, if given.
 * @returns Its settings.
 * @throws {TypeError} A relative path, or a file the gateway would refuse.
 */
export function taskNginxConf(path: string | undefined): NginxSettings {
  return path === undefined ? {} : loadTaskNginxConf(path).settings;
}

/** The compiled nginx.conf of a task, or the refusal `taskNginxConf` throws. */
function loadTaskNginxConf(
  path: string,
): { settings: NginxSettings; paths: ConfigPaths } {
  if (!isAbsolute(path) && !/^[A-Za-z]:[\\/]/.test(path)) {
    throw new TypeError(
      `Cannot parse nginx-conf "${path}": the task needs an absolute path, like C:\\nginx\\conf\\nginx.conf`,
    );
  }
  const result = loadNginxConf(path);
  if (!result.ok) {
    throw new TypeError(`Cannot use nginx-conf "${path}": ${result.message}`);
  }
  return {
    settings: result.settings,
    paths: configPaths(result.engine, result.files),
  };
}

/**
 * The folders a task's account needs, from the gateway flags it runs with
 * (and the JSON config and nginx.conf they name, read now when they can be:
 * what they set wins over the defaults, as when the gateway starts).
 *
 * @param gatewayArgs The gateway flags of the task.
 * @param base The executable's folder.
 * @param read Reads a text file, or null.
 * @returns The grants, and the nginx.conf's paths that start with a
 * variable (as written): no folder can be granted for them.
 */
export function taskFolderGrants(
  gatewayArgs: string[],
  base: string,
  read: (path: string) => string | null,
): { grants: FolderGrant[]; ungranted: string[] } {
  const cli: CliOptions = parseCliArgs(gatewayArgs);
  const abs = (p: string) => win32.resolve(base, p.replaceAll("/", "\\"));
  const layers = [cli.settings];
  const configFiles: string[] = [];
  if (cli.configPath !== undefined) {
    configFiles.push(cli.configPath);
    const text = read(abs(cli.configPath));
    try {
      if (text !== null) layers.push(parseConfigFile(text, cli.configPath));
    } catch {
      // The gateway reports it at start; the grants keep the defaults.
    }
  }
  let nginxConf: ConfigPaths | undefined;
  if (cli.nginxConfPath !== undefined) {
    configFiles.push(cli.nginxConfPath);
    const loaded = loadTaskNginxConf(cli.nginxConfPath);
    layers.push(loaded.settings);
    nginxConf = loaded.paths;
  }
  return {
    grants: folderGrants({
      base,
      layers,
      configFiles,
      ...(nginxConf === undefined ? {} : { nginxConf }),
    }),
    ungranted: nginxConf?.unknown ?? [],
  };
}

/**
 * The task's account and gateway flags, read back from its XML file.
 *
 * @param bytes The file (UTF-16LE, as written), or null.
 * @returns The account and flags, or null.
 */
export function installedTask(
  bytes: Uint8Array | null,
): { user: string; args: string[] } | null {
  if (bytes === null) return null;
  const xml = new TextDecoder("utf-16le").decode(bytes);
  const user = xml.match(/<UserId>([^<]*)<\/UserId>/)?.[1];
  if (user === undefined) return null;
  const unescape = (t: string) =>
    t.replace(
      /&(lt|gt|quot|apos|amp);/g,
      (_, e: string) =>
        ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[e]!,
    );
  const args = xml.match(/<Arguments>([^<]*)<\/Arguments>/)?.[1] ?? "";
  return { user: unescape(user), args: splitWindowsArgs(unescape(args)) };
}
