/**
 * A byte range of an open file as a response body stream.
 *
 * @module
 */

/**
 * A stream of `length` bytes of `file` from `start`, read 64 KiB at a time
 * as the response pulls (so a slow client holds no more than that). The file
 * closes at the end, on an error and when the stream is cancelled (the client
 * went away); a file that shrinks while read errors the stream rather than
 * sending fewer bytes than the `Content-Length` promised.
 *
 * @param file An open file; the stream owns it from here.
 * @param start The first byte.
 * @param length How many bytes.
 * @returns The stream.
 */
export function fileSlice(
  file: Deno.FsFile,
  start: number,
  length: number,
): ReadableStream<Uint8Array> {
  let left = length;
  let positioned = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!positioned) {
          await file.seek(start, Deno.SeekMode.Start);
          positioned = true;
        }
        const buf = new Uint8Array(Math.min(64 * 1024, left));
        const n = await file.read(buf);
        if (n === null || n === 0) throw new Error("file shrank while read");
        controller.enqueue(buf.subarray(0, n));
        left -= n;
        if (left === 0) {
          file.close();
          controller.close();
        }
      } catch (error) {
        file.close();
        controller.error(error);
      }
    },
    cancel() {
      file.close();
    },
  });
}
