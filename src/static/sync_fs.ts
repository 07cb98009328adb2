/**
 * The synchronous file-system calls of the static module: for a small file
 * a sync call costs less than an async one's hop to Deno's blocking thread
 * pool (`cache.ts`).
 *
 * @module
 */

/**
 * A synchronous `stat`, `null` when the file is missing or cannot be read:
 * either way there is no file to serve.
 *
 * @param path The file.
 * @returns Its `stat`, or `null`.
 */
export function statOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.statSync(path);
  } catch {
    return null;
  }
}

/**
 * Reads an open file's first `size` bytes (fewer when it shrank): what its
 * `fstat` promised, as nginx sends what its `fstat` said.
 *
 * @param file The open file.
 * @param size Its size by `fstat`.
 * @returns Its bytes.
 */
export function readWhole(
  file: Deno.FsFile,
  size: number,
): Uint8Array<ArrayBuffer> {
  const buf = new Uint8Array(size);
  let n = 0;
  while (n < size) {
    const got = file.readSync(buf.subarray(n));
    if (got === null || got === 0) return buf.slice(0, n);
    n += got;
  }
  return buf;
}
