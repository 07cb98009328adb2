/** An in-memory file system for the nginx.conf reader's tests. */
import { dirname, resolve } from "node:path";
import type { ConfIo } from "../../src/nginx_conf/mod.ts";

/**
 * Files by absolute path; a missing one throws as Deno does (`os error 2`).
 *
 * @param files The files.
 * @returns The file access.
 */
export function memoryIo(files: Record<string, string>): ConfIo {
  // Keys and look-ups resolved alike, so "/n/conf/x" is one file on Windows
  // too, where the reader turns it into "Z:\\n\\conf\\x".
  const byPath: Record<string, string> = Object.fromEntries(
    Object.entries(files).map(([path, text]) => [resolve(path), text]),
  );
  return {
    readTextFile(path) {
      const text = byPath[resolve(path)];
      if (text === undefined) {
        throw new Deno.errors.NotFound(
          `No such file or directory (os error 2): readfile '${path}'`,
        );
      }
      return text;
    },
    readDirFiles(path) {
      const dir = resolve(path);
      return Object.keys(byPath).filter((f) => dirname(f) === dir).map((f) =>
        f.slice(dir.length + 1)
      );
    },
  };
}
