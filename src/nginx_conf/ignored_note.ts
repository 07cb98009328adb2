/**
 * The gateway's own start notes about what it ignores (`"sendfile" is
 * ignored: …`), told apart from nginx's warnings: nginx writes its warnings
 * to the log it starts with whatever level the file sets, and the gateway
 * does the same for them (`server/startup.ts`); its own notes are lines
 * nginx never writes, so they follow the file's level, as any other line.
 *
 * @module
 */

/** `"NAME" is ignored: why`, or `"NAME … PARAM" is ignored: why`. */
const IGNORED_NOTE = /^"[^"]+" is ignored: /;

/**
 * Whether a start warning is the gateway's note that it ignores a
 * directive or parameter, not a line nginx writes.
 *
 * @param message The warning, as the configuration's load gave it.
 * @returns `true` for `"…" is ignored: …`.
 *
 * @example Usage
 * ```ts
 * import { isIgnoredNote } from "./ignored_note.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(isIgnoredNote('"sendfile" is ignored: the gateway passes upstream bytes through as they are in /c/nginx.conf:27'), true);
 * strictEqual(isIgnoredNote('conflicting server name "a" on 127.0.0.1:80, ignored'), false);
 * ```
 */
export function isIgnoredNote(message: string): boolean {
  return IGNORED_NOTE.test(message);
}
