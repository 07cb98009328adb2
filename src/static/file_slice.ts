/**
 * A byte range of an open file as a response body stream.
 *
 * @module
 */

import { ConnectionCut } from "../closing_connections.ts";
import type { OsFamily } from "../runtime/mod.ts";

/** Read at most this much at a time: a slow client holds no more. */
const CHUNK = 64 * 1024;

/** A failure of the body after its head went out, as the request logs it. */
export interface FileBodyEvent {
  /** `alert`, as nginx's `ngx_output_chain_copy_buf`. */
  level: "alert";
  /** `pread() read only N of M from "path"`. */
  message: string;
  /** `sending response to client`. */
  action: string;
}

/**
 * A streamed file's body. The request's error-lines writer is set on it
 * once the handler has the answer (`sink`): a file that ends before the
 * length its head promised is told there with the request's fields, as
 * nginx's `pread() read only … of … from "…"` `[alert]`, and the
 * connection is cut (nginx closes it: the client sees a short body, never
 * a wrong one).
 */
export class FileBody {
  /** Where a failure is told; `null`: nowhere (a test's own use). */
  sink: ((event: FileBodyEvent) => void) | null = null;
  /** The stream to answer with. */
  readonly stream: ReadableStream<Uint8Array>;

  /**
   * @param file An open file; the body owns it from here.
   * @param path Its path, for the failure's line.
   * @param range The first byte and how many bytes to send.
   * @param family The platform: `pread()` or `ReadFile()` in the line.
   */
  constructor(
    file: Deno.FsFile,
    path: string,
    range: { start: number; length: number },
    family: OsFamily,
  ) {
    let left = range.length;
    // A whole file's handle is at its start already.
    let positioned = range.start === 0;
    const told = (n: number, asked: number) => {
      const read = family === "windows" ? "ReadFile()" : "pread()";
      this.sink?.({
        level: "alert",
        message: `${read} read only ${n} of ${asked} from "${path}"`,
        action: "sending response to client",
      });
    };
    this.stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          if (!positioned) {
            await file.seek(range.start, Deno.SeekMode.Start);
            positioned = true;
          }
          const buf = new Uint8Array(Math.min(CHUNK, left));
          const n = (await file.read(buf)) ?? 0;
          if (n < buf.length) {
            // A regular file reads short only at its end: it shrank while
            // sent. As ngx_output_chain_copy_buf: told with the request,
            // nothing of the short read sent, the connection cut.
            told(n, buf.length);
            file.close();
            controller.error(new ConnectionCut());
            return;
          }
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
}
