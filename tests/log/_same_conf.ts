/**
 * nginx 1.22 and the gateway each run from its own prefix on the same
 * nginx.conf text (relative log paths land in each prefix's `logs/`), for
 * the side-by-side tests of which file takes which line.
 */
import { join } from "node:path";
import { nginxArgs, nginxBinary } from "../_nginx.ts";
import { waitFor } from "../_utils.ts";
import { type NginxPrefix, nginxPrefix } from "../_prefix.ts";

/** nginx as a foreground process, its temp folders in its prefix. */
export const PROCESS = "daemon off;\nmaster_process off;\n";
/** nginx's temp folders in its prefix (the gateway ignores them). */
export const TEMP = [
  "client_body_temp_path temp/body;",
  "proxy_temp_path temp/proxy;",
  "fastcgi_temp_path temp/fastcgi;",
  "uwsgi_temp_path temp/uwsgi;",
  "scgi_temp_path temp/scgi;",
].map((l) => `  ${l}`).join("\n");

/** A prefix with `conf/nginx.conf`, `logs/` and `temp/`, removed at the end. */
export function prefixWith(text: string): Promise<NginxPrefix> {
  return nginxPrefix(text, {
    name: "same-conf-nginx-",
    dirs: ["conf", "logs", "temp"],
  });
}

/** Runs nginx on a prefix's configuration until disposed. */
export async function runNginx(
  prefix: string,
  conf: string,
): Promise<AsyncDisposable> {
  const pid = join(prefix, "nginx.pid");
  const child = new Deno.Command(await nginxBinary(), {
    args: nginxArgs({
      prefix,
      conf,
      errorLog: join(prefix, "logs", "early.log"),
      pid,
    }),
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const stop = async () => {
    child.kill("SIGTERM");
    await child.status;
    return await stderr;
  };
  try {
    await waitFor(() => {
      try {
        Deno.statSync(pid);
        return true;
      } catch {
        return false;
      }
    }, 5000);
  } catch (error) {
    throw new Error(`nginx did not start: ${await stop()}`, { cause: error });
  }
  return { [Symbol.asyncDispose]: async () => void await stop() };
}

/** The lines of a file in a prefix's `logs/`; none when it does not exist. */
export function logLines(prefix: string, name: string): string[] {
  try {
    return Deno.readTextFileSync(join(prefix, "logs", name)).split("\n")
      .filter((l) => l !== "");
  } catch {
    return [];
  }
}
