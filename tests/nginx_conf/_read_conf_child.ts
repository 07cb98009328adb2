/**
 * Reads each nginx.conf named on its command line with the real file
 * reader, one after another, and prints one line for each: the outcome and
 * this process's peak RSS so far (Linux `VmHWM`), so a test can hold
 * hostile trees to a memory budget without sharing its heap, at the cost of
 * one process for all of them. The peak only grows, so a line's peak is at
 * least what that file took (what an earlier file left on the heap only
 * counts against the later one). Run with `-A`: Deno lets only such a
 * process read `/proc/self/status`.
 *
 * @module
 */
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";

for (const path of Deno.args) {
  const started = performance.now();
  const result = loadNginxConf(path);
  const ms = Math.round(performance.now() - started);
  const status = Deno.readTextFileSync("/proc/self/status");
  const peakMiB = Number(status.match(/VmHWM:\s+(\d+) kB/)![1]) / 1024;
  Deno.stdout.writeSync(
    new TextEncoder().encode(
      JSON.stringify({
        message: result.ok ? "ok" : result.message,
        ms,
        peakMiB,
      }) + "\n",
    ),
  );
}
