/**
 * Reads one nginx.conf with the real file reader, then prints the outcome
 * and this process's peak RSS (Linux `VmHWM`), so a test can hold a hostile
 * tree to a memory budget without sharing its heap. Run with `-A`: Deno
 * lets only such a process read `/proc/self/status`.
 *
 * @module
 */
import { loadNginxConf } from "../../src/nginx_conf/mod.ts";

const started = performance.now();
const result = loadNginxConf(Deno.args[0]!);
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
