/** An in-memory file system for the nginx.conf reader's tests. */
import { dirname } from "node:path";
import type { ConfIo } from "../../src/nginx_conf/mod.ts";

/**
 * Files by absolute path; a missing one throws as Deno does (`os error 2`).
 *
 * @param files The files.
 * @returns The file access.
 */
export function memoryIo(files: Record<string, string>): ConfIo {
  return {
    readTextFile(path) {
      const text = files[path];
      if (text === undefined) {
        throw new Deno.errors.NotFound(
          `No such file or directory (os error 2): readfile '${path}'`,
        );
      }
      return text;
    },
    readDirFiles(path) {
      return Object.keys(files).filter((f) => dirname(f) === path).map((f) =>
        f.slice(path.length + 1)
      );
    },
  };
}
