/**
 * An append-only log file that survives being renamed and never grows
 * without bound.
 *
 * Each line goes out in one synchronous `write` on a file opened for append,
 * so lines from one process never interleave and a line is on disk (in the
 * OS cache) before the request that caused it finishes — nothing is buffered
 * in the process to be lost on a crash. At most once a second it checks that
 * the path still names the open file: when another process renamed it (the
 * nginx way of rotating, which Windows allows because Rust opens files with
 * `FILE_SHARE_DELETE`) or deleted it, the next line goes to a new file at the
 * path. It also rotates by size itself, keeping a fixed number of old files;
 * a rotation that fails (a folder or a held file in a slot) still never lets
 * a file pass the size, so the logs take at most `(keep + 1) × maxBytes`.
 *
 * Not LogTape's file sink (`@std/log`'s successor): it keeps writing to a
 * renamed file, either buffers lines in memory or `fsync`s every one, and
 * throws out of the sink when a rotation's rename fails.
 *
 * @module
 */

import { dirname } from "node:path";
import { osErrorOf } from "../runtime/mod.ts";
import { logLineBytes } from "./log_values.ts";

/** Options for {@linkcode LogFile.open}. */
export interface LogFileOptions {
  /**
   * Rotate before the file would exceed this many bytes (a line longer than
   * that alone is the one exception); `0` never rotates.
   *
   * @default {16 * 1024 * 1024}
   */
  maxBytes?: number;
  /**
   * Rotated files kept as `<path>.1` … `<path>.N`; older ones are deleted.
   *
   * @default {5}
   */
  keep?: number;
  /**
   * How often, at most, to check that the path still names the open file.
   *
   * @default {1000}
   */
  checkIntervalMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
  /** Told about write, reopen and rotation failures (never throws). */
  onError?: (message: string) => void;
}

/**
 * Retry a rotation that could neither move nor empty the file (held open
 * by another program) this late; lines past the limit are dropped until.
 */
const ROTATE_RETRY_MS = 60_000;

/** An append-only, self-rotating log file. */
export class LogFile {
  #path: string;
  #file: Deno.FsFile | null = null;
  #size = 0;
  #ino: number | null = null;
  #lastCheck = 0;
  #nextRotateTry = 0;
  /** Neither rotated nor emptied: lines past `maxBytes` are dropped. */
  #blocked = false;
  /** Rotation failures told since the last clean rotation. */
  #told = new Set<string>();
  /** The file ends inside a line: the next line starts on a new one. */
  #partial = false;
  #maxBytes: number;
  #keep: number;
  #checkIntervalMs: number;
  #now: () => number;
  #onError: (message: string) => void;

  private constructor(path: string, options: LogFileOptions) {
    this.#path = path;
    this.#maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
    this.#keep = options.keep ?? 5;
    this.#checkIntervalMs = options.checkIntervalMs ?? 1000;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError ?? (() => {});
  }

  /**
   * Opens (creating it and its folder) a log file for appending.
   *
   * @param path The file's path.
   * @param options Rotation and checking options.
   * @returns The open log file.
   * @throws {Deno.errors.PermissionDenied | Error} When the folder or file
   * cannot be created: a startup error, reported as nginx's `[emerg]`.
   *
   * @example Usage
   * ```ts
   * import { LogFile } from "./log_file.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const dir = Deno.makeTempDirSync();
   * const log = LogFile.open(`${dir}/logs/error.log`);
   * log.write("first line");
   * log.close();
   * strictEqual(Deno.readTextFileSync(`${dir}/logs/error.log`), "first line\n");
   * Deno.removeSync(dir, { recursive: true });
   * ```
   */
  static open(path: string, options: LogFileOptions = {}): LogFile {
    const log = new LogFile(path, options);
    log.#openFile();
    return log;
  }

  /** The path the file is written at. */
  get path(): string {
    return this.#path;
  }

  #openFile(): void {
    const options = { append: true, create: true, read: true };
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(this.#path, options);
    } catch (error) {
      // The folder is created only when missing, so any other failure is
      // the open's own, as nginx reports it (a file in the folder's place:
      // ENOTDIR, where mkdir would have said EEXIST).
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      try {
        Deno.mkdirSync(dirname(this.#path), { recursive: true });
      } catch {
        // The folder cannot be made (on Windows a file in its place makes
        // the open fail with ERROR_PATH_NOT_FOUND, then mkdir with
        // ERROR_ALREADY_EXISTS): the open's error is the one to report.
        throw error;
      }
      file = Deno.openSync(this.#path, options);
    }
    const info = file.statSync();
    this.#partial = info.size > 0 && !endsWithNewline(file);
    this.#file = file;
    this.#size = info.size;
    this.#ino = info.ino ?? null;
    this.#lastCheck = this.#now();
  }

  #closeFile(): void {
    try {
      this.#file?.close();
    } catch {
      // Already closed; nothing to release.
    }
    this.#file = null;
  }

  /** Reopens when the path no longer names the open file. */
  #checkPath(): void {
    this.#lastCheck = this.#now();
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(this.#path);
    } catch {
      // Renamed away or deleted: start a new file at the path.
      this.#reopen();
      return;
    }
    const replaced = info.ino !== null && this.#ino !== null
      ? info.ino !== this.#ino
      : info.size < this.#size;
    if (replaced) this.#reopen();
    else this.#size = info.size;
  }

  #reopen(): void {
    this.#closeFile();
    try {
      this.#openFile();
    } catch (error) {
      this.#onError(`cannot reopen log file "${this.#path}": ${error}`);
    }
  }

  /**
   * Makes room for the next line, never by letting the file pass
   * `maxBytes`. Each old file moves up one slot (the oldest is replaced);
   * one that cannot move (a folder or a file held open in the slot above,
   * the folder not writable) is deleted instead, so the slots that still
   * work keep the newest lines. When the file itself cannot take `.1`, it
   * takes the first slot that was freed above; with none, its lines are
   * deleted (it is emptied in place); when it cannot be emptied either,
   * lines past `maxBytes` are dropped until a try a minute later succeeds.
   * Each failure is told once until a rotation succeeds again (a blocked
   * slot fails at every rotation: a line each time would fill the log it
   * is about).
   */
  #rotate(): void {
    this.#closeFile();
    this.#blocked = false;
    const path = this.#path;
    let clean = true;
    for (let i = this.#keep - 1; i >= 1; i--) {
      const from = `${path}.${i}`;
      const error = attempt(() => Deno.renameSync(from, `${path}.${i + 1}`));
      if (error === null) continue;
      clean = false;
      const removed = attempt(() => Deno.removeSync(from));
      this.#tell(
        `rename() "${from}" to "${path}.${i + 1}" failed${osText(error)}, ${
          removed === null
            ? `"${from}" deleted instead`
            : `and unlink() "${from}" failed${osText(removed)}`
        }`,
      );
    }
    const moved = this.#keep === 0
      ? attempt(() => Deno.removeSync(path))
      : attempt(() => Deno.renameSync(path, `${path}.1`));
    if (moved !== null) {
      clean = false;
      const what = this.#keep === 0
        ? `unlink() "${path}" failed`
        : `rename() "${path}" to "${path}.1" failed`;
      // A slot above a blocked one was freed by the moves: the lines keep
      // a place there, still older as the number grows.
      let slot = 2;
      while (
        slot <= this.#keep &&
        attempt(() => Deno.renameSync(path, `${path}.${slot}`)) !== null
      ) slot++;
      const emptied = slot <= this.#keep
        ? null
        : attempt(() => Deno.truncateSync(path, 0));
      if (slot <= this.#keep) {
        this.#tell(
          `${what}${osText(moved)}, moved to "${path}.${slot}" instead`,
        );
      } else if (emptied === null) {
        this.#tell(`${what}${osText(moved)}, its lines deleted instead`);
      } else {
        // Typically Windows error 32: another program holds the file
        // without sharing delete and write access. Lines past the limit
        // are dropped; the rotation is tried again later.
        this.#tell(
          `${what}${osText(moved)}, and truncate() failed${
            osText(emptied)
          }: lines past ${this.#maxBytes} bytes are dropped`,
        );
        this.#blocked = true;
        this.#nextRotateTry = this.#now() + ROTATE_RETRY_MS;
      }
    }
    if (clean) this.#told.clear();
    this.#reopen();
  }

  /** Reports a rotation failure once until a rotation succeeds. */
  #tell(failure: string): void {
    if (this.#told.has(failure)) return;
    this.#told.add(failure);
    this.#onError(`cannot rotate log file "${this.#path}": ${failure}`);
  }

  /**
   * Appends one line (a newline is added). Never throws: a failure is
   * reported to `onError` and the file is reopened on the next line.
   *
   * @param line The line, without its newline.
   * @returns Whether the line was written.
   */
  write(line: string): boolean {
    let bytes = logLineBytes(`${line}\n`);
    const now = this.#now();
    if (this.#file === null || now - this.#lastCheck >= this.#checkIntervalMs) {
      if (this.#file === null) this.#reopen();
      else this.#checkPath();
    }
    if (
      this.#maxBytes > 0 && this.#size > 0 &&
      this.#size + bytes.length > this.#maxBytes
    ) {
      if (!this.#blocked || now >= this.#nextRotateTry) this.#rotate();
      // The file could be neither rotated nor emptied (told once): the
      // limit holds, the line is lost.
      if (this.#blocked && this.#size + bytes.length > this.#maxBytes) {
        return false;
      }
    }
    const file = this.#file;
    if (file === null) return false;
    // A write cut short (a full disk) left part of a line: end it, so the
    // next line is not fused with it.
    if (this.#partial) bytes = logLineBytes(`\n${line}\n`);
    try {
      let written = 0;
      while (written < bytes.length) {
        written += file.writeSync(bytes.subarray(written));
      }
      this.#size += bytes.length;
      this.#partial = false;
      return true;
    } catch (error) {
      this.#onError(`cannot write log file "${this.#path}": ${error}`);
      // Reopened for the next line, which checks how the file ends.
      this.#closeFile();
      return false;
    }
  }

  /** Closes the file; later writes reopen it. */
  close(): void {
    this.#closeFile();
  }
}

/** Runs a file operation; its error, or `null` (a missing file is no error). */
function attempt(operation: () => void): unknown {
  try {
    operation();
    return null;
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? null : error;
  }
}

/** ` (21: Is a directory)`: an OS error as nginx words it. */
function osText(error: unknown): string {
  const os = osErrorOf(error);
  return os === undefined ? ` (${error})` : ` (${os.code}: ${os.text})`;
}

/** Whether a non-empty file's last byte is a newline (`true` if unreadable). */
function endsWithNewline(file: Deno.FsFile): boolean {
  try {
    const last = new Uint8Array(1);
    file.seekSync(-1, Deno.SeekMode.End);
    return file.readSync(last) !== 1 || last[0] === 10;
  } catch {
    return true;
  }
}
