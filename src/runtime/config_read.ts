/**
 * The one way the gateway reads a configuration file (the JSON config, an
 * nginx.conf and what it includes): only a regular file, only up to a cap,
 * so `/dev/zero`, a FIFO or a huge file can neither hang the start nor grow
 * its memory.
 *
 * @module
 */

/** A file refused for its type or size; the message names the file. */
export class ConfigFileRefusal extends Error {
  /** @param message The refusal, naming the file. */
  constructor(message: string) {
    super(message);
    this.name = "ConfigFileRefusal";
  }
}

function kindOf(info: Deno.FileInfo): string {
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a FIFO";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a regular file";
}

function checkInfo(path: string, info: Deno.FileInfo, maxBytes: number) {
  if (!info.isFile) {
    throw new ConfigFileRefusal(
      `"${path}" is not a regular file (${kindOf(info)})`,
    );
  }
  if (info.size > maxBytes) {
    throw new ConfigFileRefusal(`"${path}" is larger than ${maxBytes} bytes`);
  }
}

/**
 * Reads a configuration file as UTF-8 text.
 *
 * @param path The file.
 * @param maxBytes The largest size accepted.
 * @returns The text.
 * @throws {ConfigFileRefusal} when it is not a regular file or is larger
 * than `maxBytes`; the Deno error when it cannot be opened or read.
 *
 * @example Usage
 * ```ts
 * import { ConfigFileRefusal, readConfigText } from "./config_read.ts";
 * import { throws } from "node:assert/strict";
 *
 * throws(() => readConfigText(Deno.cwd(), 1024), ConfigFileRefusal);
 * ```
 */
export function readConfigText(path: string, maxBytes: number): string {
  // Opening a FIFO for reading blocks until a writer appears, so its type is
  // checked on the path first. A swap between this stat and the open is
  // still possible (no portable O_NONBLOCK here); the handle's own stat below
  // closes it for everything but that one open.
  checkInfo(path, Deno.statSync(path), maxBytes);
  using file = Deno.openSync(path, { read: true });
  const info = file.statSync();
  checkInfo(path, info, maxBytes);
  // Sized by the file, not the cap: an include glob over a thousand small
  // files must not allocate a thousand caps. It grows only for a file that
  // grew after the stat, and to at most maxBytes + 1 bytes, so such a file
  // is refused, never read whole.
  let buffer = new Uint8Array(Math.min(info.size, maxBytes) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) break;
      const bigger = new Uint8Array(Math.min(length * 2, maxBytes + 1));
      bigger.set(buffer);
      buffer = bigger;
    }
    const n = file.readSync(buffer.subarray(length));
    if (n === null) break;
    length += n;
  }
  if (length > maxBytes) {
    throw new ConfigFileRefusal(`"${path}" is larger than ${maxBytes} bytes`);
  }
  return new TextDecoder().decode(buffer.subarray(0, length));
}
