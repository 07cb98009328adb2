/**
 * A bounded in-memory cache of small static files, revalidated with one
 * synchronous `stat` (size, mtime, device and inode) per path and
 * millisecond, so a redeploy is visible from the next millisecond and no
 * file is held open. A file enters the cache only as read from a handle that
 * `openInsideRoot` proved inside the root, under that handle's identity, so
 * a name swapped for a link to another file never matches a cached entry;
 * and with the root it was proved inside, so one path asked for under
 * another location's folder (a link that leads out of it) is proved again.
 * Async file operations each cost a hop to Deno's blocking thread pool,
 * which for a small file costs more than reading it; a sync `stat` and a
 * memory copy do not. There is no file watcher instead of the `stat`: on
 * Windows one keeps a handle open on the client-app folder
 * (`ReadDirectoryChangesW`), so a redeploy that renames or deletes the
 * folder would fail, and a missed event would serve a replaced file.
 *
 * What a cached file's contents are and how they are sent is in
 * `cached_body.ts`; the sync `stat` and read in `sync_fs.ts`.
 *
 * @module
 */

import { type CachedBody, sharedStream } from "./cached_body.ts";
import { readWhole, statOrNull } from "./sync_fs.ts";
import { validatorsOf } from "./validators.ts";

/** A cached file. */
export interface CachedFile extends CachedBody {
  /** The `stat` it was read with. */
  size: number;
  /** Modification time in ms. */
  mtimeMs: number;
  /** Inode, where the platform reports one. */
  ino: number | null;
  /** Device, where the platform reports one. */
  dev: number | null;
  /** Birth time in ms, where the platform reports one. */
  birthMs: number | null;
  /**
   * The folders the file was proved inside (`openInsideRoot`'s roots): one
   * path may be served by two locations (`root html` and
   * `location /s/ { alias html/s/; }`), each proving it for its own.
   */
  roots: string[];
}

/** Options for {@linkcode StaticCache}. */
export interface StaticCacheOptions {
  /**
   * Files larger than this are streamed from disk, not cached.
   *
   * @default {256 * 1024}
   */
  maxFileBytes?: number;
  /**
   * Memory all cached files may hold together: each file's bytes, the copy
   * its shared stream carries, and {@linkcode ENTRY_OVERHEAD_BYTES} for its
   * objects.
   *
   * @default {32 * 1024 * 1024}
   */
  maxTotalBytes?: number;
}

/**
 * What a cached file costs beside its bytes: its entry, its shared stream
 * and the `Response` behind it, and the answer kept to be cloned
 * (`static/answer_template.ts`, about 2 KB of heap with its fields). Counted
 * so that a folder of many tiny files cannot hold more than the budget in
 * objects: 8,192 files at most in the default 32 MiB.
 */
export const ENTRY_OVERHEAD_BYTES = 4096;

/** Roots one cached file is remembered as proved inside, at most. */
const MAX_ROOTS = 8;

/** How long a missing precompressed sidecar is remembered as missing. */
const ABSENT_TTL_MS = 1000;

/** Paths whose last `stat` is remembered; past this the memory is cleared. */
const MAX_SHARED_STATS = 4096;

/** The cache. Least recently used files leave first. */
export class StaticCache {
  #entries = new Map<string, CachedFile>();
  /** The most recently used path: asked again, it needs no reordering. */
  #newest: string | null = null;
  #absent = new Map<string, number>();
  #shared = new Map<string, { info: Deno.FileInfo | null; at: number }>();
  #lastStatAt = 0;
  #total = 0;
  #maxFile: number;
  #maxTotal: number;

  /**
   * An empty cache.
   *
   * @param options Size limits.
   */
  constructor(options: StaticCacheOptions = {}) {
    this.#maxFile = options.maxFileBytes ?? 256 * 1024;
    this.#maxTotal = options.maxTotalBytes ?? 32 * 1024 * 1024;
  }

  /** Memory charged: the files' bytes, their streams' copies and their objects. */
  get totalBytes(): number {
    return this.#total;
  }

  /**
   * The cached copy of `path` when it was read from the very file a `stat`
   * just taken describes (same device, inode, size and mtime) and proved
   * inside the same root; it then becomes the most recently used. A copy
   * proved inside another folder is no proof for this one: a path through a
   * link may lie inside one location's folder and outside another's.
   *
   * @param path The file.
   * @param info Its `stat`, taken for this request.
   * @param root The folder it must lie inside.
   * @returns The cached bytes, or `null`.
   */
  lookup(path: string, info: Deno.FileInfo, root: string): CachedBody | null {
    const hit = this.#entries.get(path);
    if (
      hit === undefined || !matches(hit, info) ||
      (hit.roots[0] !== root && !hit.roots.includes(root))
    ) {
      return null;
    }
    if (this.#newest !== path) {
      this.#entries.delete(path); // refresh its place in the LRU order
      this.#entries.set(path, hit);
      this.#newest = path;
    }
    return hit;
  }

  /**
   * Reads an open file whole and caches it under `path` with the identity
   * of its `fstat`; `null` when it is too big to cache (stream it instead).
   * The same file cached under `path` already (proved inside another root)
   * is not read again: `root` joins the roots it was proved inside.
   * The file is read from the handle, never reopened by name, and is left
   * open for the caller to close.
   *
   * @param path The file's name, the cache key.
   * @param file The open file, proved inside `root`.
   * @param info Its `fstat`.
   * @param root The folder it was proved inside.
   * @returns The bytes, or `null`.
   * @throws {Error} When reading fails.
   *
   * @example Usage
   * ```ts
   * import { StaticCache } from "./cache.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const dir = Deno.makeTempDirSync();
   * Deno.writeTextFileSync(`${dir}/a.txt`, "one");
   * const cache = new StaticCache();
   * using file = Deno.openSync(`${dir}/a.txt`);
   * const body = cache.load(`${dir}/a.txt`, file, file.statSync(), dir)!;
   * strictEqual(new TextDecoder().decode(body.bytes), "one");
   * const info = Deno.statSync(`${dir}/a.txt`);
   * strictEqual(cache.lookup(`${dir}/a.txt`, info, dir), body);
   * strictEqual(cache.lookup(`${dir}/a.txt`, info, "/"), null);
   * Deno.removeSync(dir, { recursive: true });
   * ```
   */
  load(
    path: string,
    file: Deno.FsFile,
    info: Deno.FileInfo,
    root: string,
  ): CachedBody | null {
    if (info.size > this.#maxFile) return null;
    const old = this.#entries.get(path);
    if (old !== undefined && matches(old, info)) {
      // The same file, now proved inside another root as well.
      if (old.roots.length >= MAX_ROOTS) old.roots.shift();
      old.roots.push(root);
      return old;
    }
    if (old) this.#forget(path, old);
    const bytes = readWhole(file, info.size);
    // Changing right now: serve, do not keep.
    if (bytes.length !== info.size) {
      return { bytes, stream: null, validators: null, template: null };
    }
    const entry: CachedFile = {
      bytes,
      stream: sharedStream(bytes),
      validators: validatorsOf(info),
      template: null,
      size: info.size,
      mtimeMs: info.mtime?.getTime() ?? 0,
      ino: info.ino ?? null,
      dev: info.ino === null ? null : info.dev,
      birthMs: info.birthtime?.getTime() ?? null,
      roots: [root],
    };
    this.#entries.set(path, entry);
    this.#newest = path;
    this.#total += weight(bytes);
    for (const [key, entry] of this.#entries) {
      if (this.#total <= this.#maxTotal) break;
      this.#forget(key, entry);
    }
    return entry;
  }

  /**
   * The file's `stat` (`null` when it is missing), shared by the requests
   * that ask within the same millisecond of `Date.now()`: at most one
   * system call per path and millisecond. The first system call of a
   * request is a large share of a cached response's cost, and under load
   * many requests ask for the same path at once. A redeploy is seen from
   * the next millisecond on; a per-request `stat` does no better, since a
   * file can change between the `stat` and the send just as well. The
   * clock has to read the very same value, so a wall-clock step (either
   * way) only ends the sharing; after a step back every shared `stat` is
   * dropped, so none is reused when the clock reads its millisecond again.
   *
   * @param path The file.
   * @param now The clock, for tests.
   * @returns Its `stat`, or `null` when it cannot be taken.
   *
   * @example Usage
   * ```ts
   * import { StaticCache } from "./cache.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const dir = Deno.makeTempDirSync();
   * const cache = new StaticCache();
   * strictEqual(cache.stat(`${dir}/a.txt`, 5), null);
   * Deno.writeTextFileSync(`${dir}/a.txt`, "one");
   * strictEqual(cache.stat(`${dir}/a.txt`, 5), null); // the same millisecond
   * strictEqual(cache.stat(`${dir}/a.txt`, 6)?.size, 3);
   * Deno.removeSync(dir, { recursive: true });
   * ```
   */
  stat(path: string, now: number = Date.now()): Deno.FileInfo | null {
    // After a step back, an old reading comes round again: forget them all.
    if (now < this.#lastStatAt) this.#shared.clear();
    this.#lastStatAt = now;
    const last = this.#shared.get(path);
    if (last !== undefined && last.at === now) return last.info;
    const info = statOrNull(path);
    if (this.#shared.size >= MAX_SHARED_STATS) this.#shared.clear();
    this.#shared.set(path, { info, at: now });
    return info;
  }

  /**
   * `stat` for an optional file (a `.br`/`.gz` sidecar). A missing one is
   * remembered for a second: a failed `statSync` throws, and building the
   * error cost a third of a cached static request (profiled). A sidecar
   * added by a deploy is used within a second; until then the plain file is
   * served, which is never stale.
   *
   * @param path The optional file.
   * @param now The clock, for tests.
   * @returns Its `stat`, or `null`.
   */
  statOptional(path: string, now = Date.now()): Deno.FileInfo | null {
    const until = this.#absent.get(path);
    if (until !== undefined && now < until) return null;
    try {
      const info = Deno.statSync(path);
      this.#absent.delete(path);
      return info;
    } catch {
      if (this.#absent.size >= 4096) this.#absent.clear();
      this.#absent.set(path, now + ABSENT_TTL_MS);
      return null;
    }
  }

  #forget(path: string, entry: CachedFile): void {
    this.#entries.delete(path);
    if (this.#newest === path) this.#newest = null;
    this.#total -= weight(entry.bytes);
  }
}

/**
 * Whether a cached copy was read from the file `info` describes, unchanged:
 * same size and mtime, and same device and inode (birth time where no inode
 * is reported, as `sameFile` in `static/containment.ts`).
 */
function matches(hit: CachedFile, info: Deno.FileInfo): boolean {
  if (
    hit.size !== info.size || hit.mtimeMs !== (info.mtime?.getTime() ?? 0)
  ) {
    return false;
  }
  return hit.ino === null || info.ino === null
    ? hit.ino === info.ino &&
      hit.birthMs === (info.birthtime?.getTime() ?? null)
    : hit.ino === info.ino && hit.dev === info.dev;
}

/**
 * Memory a cached file holds: its bytes, the copy its shared stream
 * carries (made once, when the file is read), and its objects.
 */
function weight(bytes: Uint8Array): number {
  return bytes.length * 2 + ENTRY_OVERHEAD_BYTES;
}
