/**
 * `auth_basic_user_file` lookups remembered while the file is unchanged.
 * nginx opens and scans the file for every request, so an edit takes effect
 * at once; the gateway does the same but first asks the file's modification
 * time and size (one `stat` instead of an open, reads and a close) and
 * reuses the lookups made since the file last changed. A changed file, or
 * one that cannot be read, is scanned again as nginx scans it, so its
 * errors are nginx's.
 *
 * A file changed in the last two seconds is scanned for every request, as
 * git treats a racily clean index: the times are read in milliseconds (two
 * seconds on FAT), so an edit made in the same tick as a lookup would not
 * show in them.
 *
 * Bounds: 16 files, 1,024 users each (least recently used go first), and no
 * user name over 256 bytes is remembered: a client sending new names
 * cannot grow it.
 *
 * @module
 */

import { lookupUser, type UserLookup } from "./user_file.ts";

const MAX_FILES = 16;
const MAX_USERS = 1024;
const MAX_USER_BYTES = 256;

interface FileEntry {
  /** The file's modification time and size when the lookups were made. */
  version: string;
  users: Map<string, UserLookup>;
}

/** How long after its last change a file's lookups are not remembered. */
const SETTLE_MS = 2000;

/**
 * What the cache reads of a file (a seam for tests): a text that changes
 * when the file does, or `null` when the file is not to be remembered
 * (missing, not a file, changed a moment ago).
 */
export type FileVersion = (path: string) => Promise<string | null>;

async function statVersion(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    const mtime = info.mtime?.getTime();
    if (!info.isFile || mtime === undefined) return null;
    if (Math.abs(Date.now() - mtime) < SETTLE_MS) return null;
    return `${mtime}:${info.size}:${info.ino ?? ""}`;
  } catch {
    return null;
  }
}

/** Remembers user-file lookups per file version, bounded. */
export class UserFileCache {
  readonly #files = new Map<string, FileEntry>();
  readonly #version: FileVersion;

  /** @param version How a file's version is read. */
  constructor(version: FileVersion = statVersion) {
    this.#version = version;
  }

  /** Users remembered, over every file. */
  get size(): number {
    let n = 0;
    for (const entry of this.#files.values()) n += entry.users.size;
    return n;
  }

  /**
   * Looks a user up, from memory while the file is unchanged.
   *
   * @param path The file.
   * @param user The user (a ByteString).
   * @returns The lookup, as {@linkcode lookupUser} gives it.
   *
   * @example Usage
   * ```ts
   * import { UserFileCache } from "./user_file_cache.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const path = await Deno.makeTempFile();
   * await Deno.writeTextFile(path, "ann:{PLAIN}pw\n");
   * const cache = new UserFileCache();
   * const found = await cache.lookup(path, "ann");
   * strictEqual(found.kind === "found" && found.value, "{PLAIN}pw");
   * await Deno.remove(path);
   * ```
   */
  async lookup(path: string, user: string): Promise<UserLookup> {
    const version = await this.#version(path);
    if (version === null || user.length > MAX_USER_BYTES) {
      return await lookupUser(path, user);
    }
    let entry = this.#files.get(path);
    if (entry !== undefined) {
      this.#files.delete(path);
      if (entry.version === version) {
        this.#files.set(path, entry);
        const known = entry.users.get(user);
        if (known !== undefined) {
          entry.users.delete(user);
          entry.users.set(user, known);
          return known;
        }
      } else {
        entry = undefined;
      }
    }
    const found = await lookupUser(path, user);
    if (found.kind !== "found" && found.kind !== "not-found") return found;
    // Remembered only when the file did not change while it was read.
    if (await this.#version(path) !== version) return found;
    entry ??= this.#files.get(path);
    if (entry === undefined || entry.version !== version) {
      entry = { version, users: new Map() };
    }
    this.#files.delete(path);
    this.#files.set(path, entry);
    if (this.#files.size > MAX_FILES) {
      this.#files.delete(this.#files.keys().next().value!);
    }
    entry.users.set(user, found);
    if (entry.users.size > MAX_USERS) {
      entry.users.delete(entry.users.keys().next().value!);
    }
    return found;
  }
}
