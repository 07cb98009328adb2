/**
 * OS errors as nginx prints them, `(code: text)`, whatever Deno threw: the
 * code from Deno's `(os error N)` (or, when a message has none, the code
 * behind its `Deno.errors` class), the English text from
 * `os_error_texts.ts`, and the kinds the gateway decides on.
 *
 * @module
 */

import {
  DENO_ERROR_CODES,
  LINUX_ERROR_TEXT,
  WINDOWS_ERROR_TEXT,
} from "./os_error_texts.ts";

export { LINUX_ERROR_TEXT, WINDOWS_ERROR_TEXT };

/** An OS error as nginx prints it: ` (code: text)`. */
export interface OsErrorText {
  /** The errno or Windows code. */
  code: number;
  /** The English text, without a final period. */
  text: string;
}

/** The platform whose error numbering a code belongs to. */
export type OsFamily = "windows" | "linux";

/**
 * The meaning of an OS error, independent of the platform's numbering. The
 * gateway decides on kinds; the numbers are only printed.
 */
export type OsErrorKind =
  | "refused"
  | "reset"
  | "aborted"
  | "timed-out"
  | "host-unreachable"
  | "net-unreachable"
  | "address-in-use"
  | "access-denied"
  | "not-found"
  | "path-not-found"
  | "other";

const KIND_CODES: Readonly<
  Record<Exclude<OsErrorKind, "other">, Record<OsFamily, number>>
> = {
  "refused": { windows: 10061, linux: 111 },
  "reset": { windows: 10054, linux: 104 },
  "aborted": { windows: 10053, linux: 103 },
  "timed-out": { windows: 10060, linux: 110 },
  "host-unreachable": { windows: 10065, linux: 113 },
  "net-unreachable": { windows: 10051, linux: 101 },
  "address-in-use": { windows: 10048, linux: 98 },
  "access-denied": { windows: 10013, linux: 13 },
  "not-found": { windows: 2, linux: 2 },
  "path-not-found": { windows: 3, linux: 2 },
};

/** The OS family the running process reports errors in. */
export function currentOsFamily(): OsFamily {
  return Deno.build.os === "windows" ? "windows" : "linux";
}

/**
 * Returns the text nginx would print for an OS error code.
 *
 * @param code The errno (Linux) or Win32/Winsock code (Windows).
 * @param family Which numbering the code uses.
 * @returns The English text, or `Unknown error N` for a code not in the table.
 *
 * @example Usage
 * ```ts
 * import { osErrorText } from "./os_errors.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(osErrorText(111, "linux"), "Connection refused");
 * ```
 */
export function osErrorText(code: number, family: OsFamily): string {
  const table = family === "windows" ? WINDOWS_ERROR_TEXT : LINUX_ERROR_TEXT;
  return table[code] ?? `Unknown error ${code}`;
}

/**
 * Returns the code a platform uses for an error kind, for example when the
 * gateway's own timer fires and nginx would print `ETIMEDOUT`.
 *
 * @param kind The error kind.
 * @param family Which numbering to use.
 * @returns The code.
 *
 * @example Usage
 * ```ts
 * import { osErrorCode } from "./os_errors.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(osErrorCode("timed-out", "windows"), 10060);
 * ```
 */
export function osErrorCode(
  kind: Exclude<OsErrorKind, "other">,
  family: OsFamily,
): number {
  return KIND_CODES[kind][family];
}

/**
 * Classifies an OS error code.
 *
 * @param code The code.
 * @param family Which numbering the code uses (the same number means
 * different things on Windows and Linux).
 * @returns The kind, `other` when the code is not one the gateway acts on.
 *
 * @example Usage
 * ```ts
 * import { osErrorKind } from "./os_errors.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(osErrorKind(10061, "windows"), "refused");
 * strictEqual(osErrorKind(104, "linux"), "reset");
 * ```
 */
export function osErrorKind(code: number, family: OsFamily): OsErrorKind {
  for (const [kind, codes] of Object.entries(KIND_CODES)) {
    if (codes[family] === code) return kind as OsErrorKind;
  }
  return "other";
}

/**
 * Parses the `(os error N)` that Deno appends to OS errors.
 *
 * @param detail An error message.
 * @returns The code, or `undefined`.
 *
 * @example Usage
 * ```ts
 * import { parseOsErrorCode } from "./os_errors.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(parseOsErrorCode("Connection refused (os error 10061)"), 10061);
 * ```
 */
export function parseOsErrorCode(detail: string): number | undefined {
  const m = detail.match(/\(os error (\d+)\)/);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/**
 * The OS error inside anything Deno threw, as nginx prints it: the code from
 * `(os error N)`, else the code behind its `Deno.errors` class, and our
 * English text for it. `fetch` wraps the OS error in `cause` (Deno ≥ 2.9.2).
 *
 * @param error What was thrown.
 * @param family Whose numbering the code uses.
 * @returns The code and text, or `undefined` when there is no OS error.
 *
 * @example Usage
 * ```ts
 * import { osErrorOf } from "./os_errors.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * deepStrictEqual(osErrorOf(new Error("x (os error 98)"), "linux"), { code: 98, text: "Address already in use" });
 * deepStrictEqual(osErrorOf(new Deno.errors.NotADirectory("x"), "linux"), { code: 20, text: "Not a directory" });
 * ```
 */
export function osErrorOf(
  error: unknown,
  family: OsFamily = currentOsFamily(),
): OsErrorText | undefined {
  let e = error;
  // fetch nests the OS error (Deno ≥ 2.9.2); a few levels are enough.
  for (let depth = 0; e instanceof Error && depth < 4; depth++) {
    const byClass = Object.hasOwn(DENO_ERROR_CODES, e.name)
      ? DENO_ERROR_CODES[e.name]![family][0]
      : undefined;
    const code = parseOsErrorCode(e.message) ?? byClass;
    if (code !== undefined) return { code, text: osErrorText(code, family) };
    e = e.cause;
  }
  return undefined;
}
