/**
 * A station folder as nginx for Windows has it (`conf\`, `logs\`, `html\`),
 * built in a temporary folder from a case of tests/testdata/nginx_conf/, and
 * `nginx -t` run on it.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nginxBinary } from "../_nginx.ts";

/** The corpus folder. */
export const CORPUS = fileURLToPath(
  new URL("../testdata/nginx_conf/", import.meta.url),
);

/** A temporary nginx prefix holding one corpus case. */
export interface Station extends AsyncDisposable {
  /** The prefix. */
  prefix: string;
  /** `<prefix>/conf/nginx.conf`. */
  conf: string;
}

function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    const source = join(from, entry.name);
    if (entry.isDirectory) copyTree(source, join(to, entry.name));
    else Deno.copyFileSync(source, join(to, entry.name));
  }
}

/** Applies an edit to every file of the conf folder but mime.types. */
function editTree(dir: string, edit: (text: string) => string): void {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) editTree(path, edit);
    else if (entry.name !== "mime.types") {
      Deno.writeTextFileSync(path, edit(Deno.readTextFileSync(path)));
    }
  }
}

/**
 * Builds a station folder from a corpus case (its files become `conf\`,
 * with the shared `mime.types`).
 *
 * @param name The case's folder name.
 * @param edit Changes the copied files' text (ports, addresses).
 * @returns The station.
 */
export function station(
  name: string,
  edit: (text: string) => string = (t) => t,
): Station {
  const prefix = Deno.makeTempDirSync({ prefix: "station-nginx-" });
  copyTree(join(CORPUS, name), join(prefix, "conf"));
  Deno.copyFileSync(
    join(CORPUS, "mime.types"),
    join(prefix, "conf/mime.types"),
  );
  for (const dir of ["logs", "html"]) Deno.mkdirSync(join(prefix, dir));
  const conf = join(prefix, "conf/nginx.conf");
  editTree(join(prefix, "conf"), edit);
  return {
    prefix,
    conf,
    [Symbol.asyncDispose]: async () => {
      await Deno.remove(prefix, { recursive: true });
    },
  };
}

/**
 * `nginx -t` on a station: the verdict and the `[emerg]` text.
 *
 * @param s The station.
 * @returns Whether the test passed, and the first `[emerg]` message.
 */
export async function nginxTest(
  s: Station,
): Promise<{ ok: boolean; emerg: string | null }> {
  const out = await new Deno.Command(await nginxBinary(), {
    args: [
      "-t",
      "-q",
      "-p",
      `${s.prefix}/`,
      "-c",
      s.conf,
      "-e",
      `${s.prefix}/logs/test.log`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stderr);
  return {
    ok: out.success,
    emerg: text.match(/\[emerg\] (.*)/)?.[1] ?? null,
  };
}
