/**
 * A station folder as nginx for Windows has it (`conf\`, `logs\`, `html\`),
 * built in a temporary folder from a case of tests/testdata/nginx_conf/, and
 * `nginx -t` run on it.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nginxArgs, nginxBinary } from "../_nginx.ts";
import { freePort } from "../_utils.ts";

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
  /** `<prefix>/logs/nginx.pid`: this station's own (see `nginxArgs()`). */
  pid: string;
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
    pid: join(prefix, "logs/nginx.pid"),
    [Symbol.asyncDispose]: async () => {
      await Deno.remove(prefix, { recursive: true });
    },
  };
}

/**
 * Writes a station's conf folder again from its case with another edit (new
 * ports), in place: the files are rewritten, no folder gains or loses an
 * entry, so a client-app folder written beside it keeps its change time.
 *
 * @param s The station.
 * @param name The case's folder name it was built from.
 * @param edit Changes the copied files' text.
 */
export function editStation(
  s: Station,
  name: string,
  edit: (text: string) => string,
): void {
  copyTree(join(CORPUS, name), join(s.prefix, "conf"));
  editTree(join(s.prefix, "conf"), edit);
}

/**
 * A copy of the station for Debian's nginx, edited within each line so
 * nginx's line numbers hold: an `access_log` on the line of `http {` when
 * the files name none (nginx for Windows' built-in one is `logs/access.log`
 * in its prefix; Debian's is `/var/log/nginx/access.log`, which a non-root
 * run may not open), and each `listen` on a free loopback port, because
 * `nginx -t` binds (`ngx_init_cycle()`): port 80 needs root, and a port
 * another test holds would fail the test.
 */
function debianCopy(s: Station): string {
  const prefix = Deno.makeTempDirSync({ prefix: "station-nginx-t-" });
  copyTree(s.prefix, prefix);
  const conf = join(prefix, "conf");
  const texts = [...Deno.readDirSync(conf)].filter((e) => e.isFile)
    .map((e) => Deno.readTextFileSync(join(conf, e.name)));
  const noAccessLog = !texts.some((t) => /^\s*access_log\b/m.test(t));
  const ports = new Map<string, number>();
  editTree(conf, (t) => {
    const text = t.replace(
      /\blisten(\s+)("?)(\d+|[\w.*[\]:]+:\d+)\2(?=\s*;)/g,
      (_, space: string, _quote: string, address: string) => {
        if (!ports.has(address)) ports.set(address, freePort());
        return `listen${space}127.0.0.1:${ports.get(address)}`;
      },
    );
    return noAccessLog
      ? text.replace(/^(\s*http\s*\{)/m, "$1 access_log logs/access.log;")
      : text;
  });
  return prefix;
}

/**
 * `nginx -t` on a station: the verdict and the `[emerg]` text. nginx reads a
 * copy ({@linkcode debianCopy}); its paths in the message are the station's.
 *
 * @param s The station.
 * @param options `uid`: run nginx as this user (with `setpriv`, as root).
 * @returns Whether the test passed, and the first `[emerg]` message.
 */
export async function nginxTest(
  s: Station,
  options: { uid?: number } = {},
): Promise<{ ok: boolean; emerg: string | null }> {
  // The ports are drawn before nginx binds them and other suites draw from
  // the same range: a port taken meanwhile is tried again on new ports.
  for (let attempt = 1;; attempt++) {
    const verdict = await nginxTestOnce(s, options);
    const taken = verdict.emerg?.includes("Address already in use") ?? false;
    if (!taken || attempt >= 5) return verdict;
  }
}

async function nginxTestOnce(
  s: Station,
  options: { uid?: number },
): Promise<{ ok: boolean; emerg: string | null }> {
  const prefix = debianCopy(s);
  const { uid } = options;
  if (uid !== undefined) {
    await Deno.chmod(prefix, 0o755);
    await Deno.chmod(join(prefix, "logs"), 0o777);
  }
  const nginx = await nginxBinary();
  const user = uid === undefined
    ? []
    : ["--reuid", `${uid}`, "--regid", `${uid}`, "--clear-groups", nginx];
  try {
    const out = await new Deno.Command(uid === undefined ? nginx : "setpriv", {
      args: [
        ...user,
        ...nginxArgs({
          prefix,
          conf: join(prefix, s.conf.slice(s.prefix.length)),
          errorLog: `${prefix}/logs/test.log`,
          pid: join(prefix, "logs/nginx.pid"),
        }, true),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stderr).replaceAll(
      prefix,
      s.prefix,
    );
    return {
      ok: out.success,
      emerg: text.match(/\[emerg\] (.*)/)?.[1] ?? null,
    };
  } finally {
    await Deno.remove(prefix, { recursive: true });
  }
}
