/**
 * `auth_basic_user_file`, read per request as nginx reads it
 * (`ngx_http_auth_basic_handler`): the file is opened for each check and
 * scanned line by line until the user's line, so an edit takes effect at
 * once. Lines are `user:value[:comment]`; a line starting with `#` or CR is
 * skipped; the value ends at LF, CR or `:`; the first line of the user wins.
 *
 * Bounds: the scan holds one 16 KiB chunk and at most 2,048 bytes of value
 * (nginx's `NGX_HTTP_AUTH_BUF_SIZE`: a longer value is cut there, as nginx
 * cuts it), whatever the file's size; its time grows with the bytes before
 * the user's line, as nginx's does.
 *
 * @module
 */

import {
  byteStringFromBytes,
  byteStringToBytes,
  osErrorOf,
  type OsErrorText,
} from "../runtime/mod.ts";

/** The most bytes of a value kept (nginx's buffer). */
export const MAX_VALUE_BYTES = 2048;

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const HASH = 0x23;

/** Finds one user's value in the bytes of a user file, fed in chunks. */
export class UserFileScanner {
  readonly #user: Uint8Array;
  #state: "login" | "value" | "skip" = "login";
  #login = 0;
  #value: number[] = [];
  #found: string | null = null;

  /** @param user The user (a ByteString, never empty). */
  constructor(user: string) {
    this.#user = byteStringToBytes(user);
  }

  /**
   * Scans the next bytes of the file.
   *
   * @param chunk The bytes.
   * @returns The user's value once its line has ended, else `null`.
   */
  feed(chunk: Uint8Array): string | null {
    if (this.#found !== null) return this.#found;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.#state === "login") {
        if (this.#login === 0) {
          if (c === HASH || c === CR) {
            this.#state = "skip";
            continue;
          }
          if (c === LF) continue;
        }
        // The user is followed by ':' in the line, as nginx compares it.
        const want = this.#login < this.#user.length
          ? this.#user[this.#login]
          : COLON;
        if (c !== want) {
          this.#state = "skip";
          continue;
        }
        if (this.#login === this.#user.length) this.#state = "value";
        this.#login++;
      } else if (this.#state === "value") {
        if (c === LF || c === CR || c === COLON) return this.#finish();
        this.#value.push(c);
        if (this.#value.length >= MAX_VALUE_BYTES) return this.#finish();
      } else if (c === LF) {
        this.#state = "login";
        this.#login = 0;
      }
    }
    return null;
  }

  /**
   * Ends the scan at the end of the file.
   *
   * @returns The value when the file ended on the user's line, else `null`.
   */
  end(): string | null {
    if (this.#found !== null) return this.#found;
    return this.#state === "value" ? this.#finish() : null;
  }

  #finish(): string {
    this.#found = byteStringFromBytes(Uint8Array.from(this.#value));
    return this.#found;
  }
}

/** What looking a user up in the file gave. */
export type UserLookup =
  | { kind: "found"; value: string }
  | { kind: "not-found" }
  /** nginx: `open() "…" failed`; `missing` when the OS said no such file. */
  | { kind: "open-failed"; osError: OsErrorText | undefined; missing: boolean }
  /** nginx: `pread() "…" failed`. */
  | { kind: "read-failed"; osError: OsErrorText | undefined };

/**
 * Looks a user up in a user file, reading it in 16 KiB chunks until the
 * user's line; the file is closed before this returns.
 *
 * @param path The file.
 * @param user The user (a ByteString).
 * @returns The value, or why there is none.
 *
 * @example Usage
 * ```ts
 * import { lookupUser } from "./user_file.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "# users\nann:{PLAIN}pw\n");
 * const found = await lookupUser(path, "ann");
 * strictEqual(found.kind === "found" && found.value, "{PLAIN}pw");
 * await Deno.remove(path);
 * ```
 */
export async function lookupUser(
  path: string,
  user: string,
): Promise<UserLookup> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    const osError = osErrorOf(error);
    // NGX_ENOENT: ENOENT on Linux, ERROR_FILE_NOT_FOUND on Windows; both 2.
    return { kind: "open-failed", osError, missing: osError?.code === 2 };
  }
  try {
    const scanner = new UserFileScanner(user);
    const buffer = new Uint8Array(16 * 1024);
    for (;;) {
      let n: number | null;
      try {
        n = await file.read(buffer);
      } catch (error) {
        return { kind: "read-failed", osError: osErrorOf(error) };
      }
      const found = n === null
        ? scanner.end()
        : scanner.feed(buffer.subarray(0, n));
      if (found !== null) return { kind: "found", value: found };
      if (n === null) return { kind: "not-found" };
    }
  } finally {
    file.close();
  }
}
