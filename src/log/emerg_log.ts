/**
 * The `[emerg]` line of a failed start, written to the error log even
 * though the gateway's logs are not open (or cannot be): the gateway runs
 * from a scheduled task with no console, and the log is what the
 * administrator reads. nginx does the same with its default error log
 * before the configuration names one (`ngx_log_init`).
 *
 * @module
 */

import type { OsErrorText } from "../runtime/mod.ts";
import { LogFile } from "./log_file.ts";
import { createLogger } from "./logger.ts";
import { formatConsoleLine } from "./error_log.ts";
import { osErrorOf, type OsFamily } from "../runtime/mod.ts";

/** Where {@linkcode writeEmergLine} writes, and where it complains. */
export interface EmergLogOptions {
  /** The error log the command line or config names, if it could be told. */
  path?: string;
  /** The default error log, beside the executable. */
  defaultPath: string;
  /** Writes to stderr; never throws. */
  err(text: string): void;
  /** Whose numbering OS codes use. */
  family?: OsFamily;
}

/**
 * Writes one `[emerg]` line to the first error log that opens: the one
 * named, else the default. Never throws; when no log opens, says so on
 * stderr as nginx does (`[alert] could not open error log file: …`).
 *
 * @param event The message and its OS error.
 * @param options The logs to try.
 * @returns Whether the line was written.
 *
 * @example Usage
 * ```ts
 * import { writeEmergLine } from "./emerg_log.ts";
 * import { match } from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * writeEmergLine({ message: 'unknown key "upstrem" in gw.json' }, {
 *   defaultPath: `${dir}/logs/error.log`,
 *   err: () => {},
 * });
 * match(Deno.readTextFileSync(`${dir}/logs/error.log`), /\[emerg\] \d+#\d+: unknown key "upstrem" in gw\.json\n$/);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function writeEmergLine(
  event: { message: string; osError?: OsErrorText },
  options: EmergLogOptions,
): boolean {
  const paths = [
    ...new Set([options.path ?? options.defaultPath, options.defaultPath]),
  ];
  let first: [string, unknown] | undefined;
  for (const path of paths) {
    let file: LogFile;
    try {
      file = LogFile.open(path);
    } catch (error) {
      first ??= [path, error];
      continue;
    }
    const logger = createLogger({ errorLog: file, accessLog: null });
    logger.error({
      level: "emerg",
      message: event.message,
      ...(event.osError === undefined ? {} : { osError: event.osError }),
    });
    logger.close();
    return true;
  }
  const [path, error] = first!;
  const os = osErrorOf(error, options.family);
  const message = `could not open error log file: open() "${path}" failed`;
  options.err(
    os === undefined
      ? formatConsoleLine("alert", `${message}: ${error}`)
      : formatConsoleLine("alert", message, os),
  );
  return false;
}
