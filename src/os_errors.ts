/**
 * English operating-system error texts keyed by code, printed the way nginx
 * prints them in `(code: text)`.
 *
 * nginx for Windows asks `FormatMessage` for English first and strips the
 * trailing period (`src/os/win32/ngx_errno.c`); on Linux it prints
 * `strerror()`. Deno's own error strings follow the Windows UI language
 * (denoland/deno#20394 and XX-net/XX-Net#13552 show localized texts), so the
 * gateway never copies them: it prints from these tables instead.
 *
 * @module
 */

/** The platform whose error numbering a code belongs to. */
export type OsFamily = "windows" | "linux";

/** Winsock and Win32 texts (Windows SDK `winerror.h`, final period removed). */
export const WINDOWS_ERROR_TEXT: Readonly<Record<number, string>> = {
  2: "The system cannot find the file specified",
  3: "The system cannot find the path specified",
  5: "Access is denied",
  32:
    "The process cannot access the file because it is being used by another process",
  112: "There is not enough space on the disk",
  123: "The filename, directory name, or volume label syntax is incorrect",
  10013:
    "An attempt was made to access a socket in a way forbidden by its access permissions",
  10022: "An invalid argument was supplied",
  10024: "Too many open files",
  10048:
    "Only one usage of each socket address (protocol/network address/port) is normally permitted",
  10049: "The requested address is not valid in its context",
  10050: "A socket operation encountered a dead network",
  10051: "A socket operation was attempted to an unreachable network",
  10053:
    "An established connection was aborted by the software in your host machine",
  10054: "An existing connection was forcibly closed by the remote host",
  10055:
    "An operation on a socket could not be performed because the system lacked sufficient buffer space or because a queue was full",
  10057:
    "A request to send or receive data was disallowed because the socket is not connected and (when sending on a datagram socket using a sendto call) no address was supplied",
  10060:
    "A connection attempt failed because the connected party did not properly respond after a period of time, or established connection failed because connected host has failed to respond",
  10061:
    "No connection could be made because the target machine actively refused it",
  10064: "A socket operation failed because the destination host was down",
  10065: "A socket operation was attempted to an unreachable host",
  11001: "No such host is known",
} as const;

/** glibc `strerror()` texts for the errno values a proxy meets. */
export const LINUX_ERROR_TEXT: Readonly<Record<number, string>> = {
  1: "Operation not permitted",
  2: "No such file or directory",
  12: "Cannot allocate memory",
  13: "Permission denied",
  20: "Not a directory",
  21: "Is a directory",
  23: "Too many open files in system",
  24: "Too many open files",
  28: "No space left on device",
  30: "Read-only file system",
  32: "Broken pipe",
  36: "File name too long",
  98: "Address already in use",
  99: "Cannot assign requested address",
  100: "Network is down",
  101: "Network is unreachable",
  103: "Software caused connection abort",
  104: "Connection reset by peer",
  105: "No buffer space available",
  107: "Transport endpoint is not connected",
  110: "Connection timed out",
  111: "Connection refused",
  112: "Host is down",
  113: "No route to host",
} as const;

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
