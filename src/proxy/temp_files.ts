/**
 * The folder for request bodies larger than `client_body_buffer_size`
 * (nginx's `client_body_temp_path`). Files are named as nginx names them,
 * ten digits (`0000000001`), and removed as soon as they are open, as nginx
 * does on Unix (`ngx_open_tempfile`): the open handle keeps the data, and a
 * process that is killed leaves nothing behind. Windows deletes a file
 * removed while open once its last handle closes, which a killed process
 * also does. A file left by a removal that failed is deleted when the
 * folder is first used by the next run.
 *
 * @module
 */

/** A temporary file's name: ten digits, as nginx's `%010uD`. */
const TEMP_NAME = /^\d{10}$/;

/** An open temporary file, already removed from its folder when possible. */
export interface TempFile {
  /** The open file, for reading and writing. */
  file: Deno.FsFile;
  /** Its path, for the log line. */
  path: string;
  /** Closes it (and removes it, if removing it at once failed). */
  close(): void;
}

/** The temporary-file folder of one gateway. */
export class TempFiles {
  #dir: string;
  #next = 1;
  #ready: Promise<void> | null = null;

  /** @param dir The folder, absolute; made when first needed. */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The folder. */
  get dir(): string {
    return this.#dir;
  }

  /**
   * Opens a new temporary file.
   *
   * @returns The file.
   * @throws The OS error of making the folder or opening the file.
   */
  async create(): Promise<TempFile> {
    await (this.#ready ??= this.#prepare());
    // A name another file holds (a leftover that could not be deleted) is
    // skipped, as nginx's ngx_create_temp_file does on EEXIST.
    for (let tries = 0;; tries++) {
      const path = `${this.#dir}/${String(this.#next++).padStart(10, "0")}`;
      let file: Deno.FsFile;
      try {
        file = await Deno.open(path, {
          read: true,
          write: true,
          createNew: true,
        });
      } catch (error) {
        if (error instanceof Deno.errors.AlreadyExists && tries < 100) {
          continue;
        }
        throw Object.assign(error as Error, { path });
      }
      let removed = false;
      try {
        await Deno.remove(path);
        removed = true;
      } catch {
        // Removed on close instead.
      }
      return {
        file,
        path,
        close: () => {
          try {
            file.close();
          } catch { /* already closed */ }
          if (!removed) Deno.remove(path).catch(() => {});
        },
      };
    }
  }

  /** Makes the folder and deletes files a previous run left in it. */
  async #prepare(): Promise<void> {
    try {
      await Deno.mkdir(this.#dir, { recursive: true });
    } catch (error) {
      this.#ready = null;
      throw Object.assign(error as Error, { path: this.#dir });
    }
    try {
      for await (const entry of Deno.readDir(this.#dir)) {
        if (entry.isFile && TEMP_NAME.test(entry.name)) {
          await Deno.remove(`${this.#dir}/${entry.name}`).catch(() => {});
        }
      }
    } catch {
      // Unreadable folder: creating a file will say why.
    }
  }
}
