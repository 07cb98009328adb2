/**
 * A station folder built from one corpus file: the case's files become
 * `conf/` (with the shared `mime.types`), `{{PLACEHOLDERS}}` are filled in,
 * and every folder the file serves from (`root`, `alias`) gets the same
 * fixture files, so nginx and the gateway see identical trees.
 *
 * @module
 */

import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Directive, readConfTree, walk } from "./conf_tree.ts";

/** The corpus folders. */
export const TESTDATA = fileURLToPath(
  new URL("../../testdata/nginx_conf/", import.meta.url),
);

/** The values placeholders are replaced with. */
export interface Placeholders {
  /** Listen ports by placeholder number (1 for `{{LISTEN}}`). */
  listen: number[];
  /** Upstream ports by placeholder number (1 for `{{UPSTREAM}}`). */
  upstream: number[];
}

/** A built station. */
export interface Station extends AsyncDisposable {
  prefix: string;
  /** `<prefix>/conf/nginx.conf`. */
  conf: string;
  /** The directive tree, includes followed. */
  tree: Directive[];
  /** `pid` is set by the file itself. */
  hasPid: boolean;
  /** `master_process` is set by the file itself. */
  hasMasterProcess: boolean;
  /** `daemon` is set by the file itself. */
  hasDaemon: boolean;
}

/** The fixture files every served folder gets. */
export const FIXTURES: Record<string, string> = {
  "index.html": "<!doctype html><p>corpus app</p>\n",
  "50x.html": "<!doctype html><p>corpus 50x</p>\n",
  "assets/app.js": "console.log('corpus');\n",
  "assets/app.css": "p { color: red; }\n",
  "favicon.ico": "ICO",
  ".env": "SECRET=corpus\n",
  "docs/readme.txt": "a folder without an index\n",
};

/** Placeholder numbers used in a text, e.g. `UPSTREAM` → `[1, 2]`. */
export function placeholderCount(text: string, name: string): number {
  let most = 0;
  for (
    const m of text.matchAll(new RegExp(`\\{\\{${name}(?:_(\\d+))?\\}\\}`, "g"))
  ) {
    most = Math.max(most, m[1] ? Number(m[1]) : 1);
  }
  return most;
}

/** Every text file of a case, for counting its placeholders. */
export function caseText(dir: string): string {
  let out = "";
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out += caseText(path);
    else out += Deno.readTextFileSync(path);
  }
  return out;
}

function fill(text: string, prefix: string, values: Placeholders): string {
  const pick = (list: number[], n: string | undefined) =>
    String(list[(n ? Number(n) : 1) - 1] ?? 0);
  return text
    .replaceAll("{{PREFIX}}", prefix)
    .replaceAll("{{USER}}", Deno.env.get("USER") ?? "root")
    .replace(
      /\{\{LISTEN(?:_(\d+))?\}\}/g,
      (_, n) => `127.0.0.1:${pick(values.listen, n)}`,
    )
    .replace(/\{\{PORT(?:_(\d+))?\}\}/g, (_, n) => pick(values.listen, n))
    .replace(
      /\{\{UPSTREAM(?:_(\d+))?\}\}/g,
      (_, n) => `127.0.0.1:${pick(values.upstream, n)}`,
    );
}

function copyFilled(
  from: string,
  to: string,
  prefix: string,
  values: Placeholders,
): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const e of Deno.readDirSync(from)) {
    const source = join(from, e.name);
    const target = join(to, e.name);
    if (e.isDirectory) copyFilled(source, target, prefix, values);
    else {
      Deno.writeTextFileSync(
        target,
        fill(Deno.readTextFileSync(source), prefix, values),
      );
    }
  }
}

/** The TLS ports of a station and the certificates a client trusts. */
export interface StationTls {
  /** Listen ports of servers with `listen … ssl` or `ssl on`. */
  ports: Set<number>;
  /** Every `ssl_certificate` of the file, PEM (the cases' are self-signed). */
  caCerts: string[];
}

/**
 * The TLS ports of a built station: a client speaks TLS to them, as a
 * browser does to an `https://` address.
 *
 * @param tree The station's directives.
 * @param prefix The station's prefix (relative certificate paths start at
 * its `conf/`, as nginx's `ssl_certificate` does).
 * @returns The ports and certificates.
 */
export function stationTls(tree: Directive[], prefix: string): StationTls {
  const ports = new Set<number>();
  const caCerts: string[] = [];
  for (const { directive } of walk(tree)) {
    if (directive.name === "ssl_certificate") {
      const path = directive.args[0] ?? "";
      const file = isAbsolute(path) ? path : join(prefix, "conf", path);
      try {
        caCerts.push(Deno.readTextFileSync(file));
      } catch { /* nginx -t reports it */ }
    }
    if (directive.name !== "server" || directive.block === undefined) continue;
    const sslOn = directive.block.some((d) =>
      d.name === "ssl" && d.args[0]?.toLowerCase() === "on"
    );
    for (const d of directive.block) {
      if (d.name !== "listen") continue;
      const port = Number(/:(\d+)$/.exec(d.args[0] ?? "")?.[1]);
      if (port > 0 && (sslOn || d.args.slice(1).includes("ssl"))) {
        ports.add(port);
      }
    }
  }
  return { ports, caCerts };
}

/** Whether `http`'s own directives (its includes followed) name `name`. */
function httpHas(tree: Directive[], name: string): boolean {
  return tree.some((d) =>
    d.name === "http" && d.block?.some((inner) => inner.name === name)
  );
}

/** Whether any directive of the tree is `name` (in any block). */
export function has(tree: Directive[], name: string): boolean {
  for (const { directive } of walk(tree)) {
    if (directive.name === name) return true;
  }
  return false;
}

/**
 * Builds a station in a new temporary folder.
 *
 * @param caseDir The corpus case folder.
 * @param values The ports.
 * @param options `nginx`: the station is for nginx 1.22 for Linux; `base`:
 * the folder of a station of the same case built before (`station_ahead.ts`),
 * built again in place: its served folders keep their change times.
 * @returns The station; disposing removes the folder.
 */
export function buildStation(
  caseDir: string,
  values: Placeholders,
  options: { nginx?: boolean; base?: string | undefined } = {},
): Station {
  // The prefix is one level down, so a root such as `../dist` stays inside
  // this station's own temporary folder.
  const base = options.base ??
    Deno.makeTempDirSync({ prefix: "corpus-station-" });
  const prefix = join(base, "nginx");
  try {
    copyFilled(caseDir, join(prefix, "conf"), prefix, values);
    Deno.copyFileSync(
      join(TESTDATA, "mime.types"),
      join(prefix, "conf/mime.types"),
    );
    for (const dir of ["logs", "html"]) {
      Deno.mkdirSync(join(prefix, dir), { recursive: true });
    }
    const conf = join(prefix, "conf/nginx.conf");
    let tree = readConfTree(conf, join(prefix, "conf"));
    // nginx on Debian logs to /var/log/nginx/access.log where no level names
    // an access log; nginx for Windows (and the gateway) use logs/access.log,
    // so an `http` block without one gets that line, the same for both. Only
    // `http`'s own directives count: an `access_log off` in one location
    // leaves every other request on the default (ngx_http_log_merge_loc_conf).
    if (!httpHas(tree, "access_log")) {
      const text = Deno.readTextFileSync(conf);
      Deno.writeTextFileSync(
        conf,
        text.replace(/^(\s*http\s*\{)/m, "$1\n    access_log logs/access.log;"),
      );
      tree = readConfTree(conf, join(prefix, "conf"));
    }
    // `use select` names the one event method nginx for Windows has; the
    // Linux build here has no select module and refuses the file. The event
    // method changes nothing a client or an upstream sees, and the gateway
    // ignores `events`, so nginx's copy leaves the line out.
    const useSelect = /^(\s*)use\s+select\s*;/m;
    const text = Deno.readTextFileSync(conf);
    if (options.nginx && useSelect.test(text)) {
      Deno.writeTextFileSync(conf, text.replace(useSelect, "$1"));
    }
    const served = new Set([join(prefix, "html")]);
    for (const { directive } of walk(tree)) {
      if (directive.name !== "root" && directive.name !== "alias") continue;
      const path = directive.args[0] ?? "";
      if (path.includes("$") || path === "") continue;
      served.add(isAbsolute(path) ? path : join(prefix, path));
    }
    for (const dir of served) {
      if (!dir.startsWith(base)) continue;
      for (const [name, text] of Object.entries(FIXTURES)) {
        const file = join(dir, name);
        Deno.mkdirSync(dirname(file), { recursive: true });
        Deno.writeTextFileSync(file, text);
      }
    }
    return {
      prefix,
      conf,
      tree,
      hasPid: has(tree, "pid"),
      hasMasterProcess: has(tree, "master_process"),
      hasDaemon: has(tree, "daemon"),
      async [Symbol.asyncDispose]() {
        await Deno.remove(base, { recursive: true });
      },
    };
  } catch (error) {
    Deno.removeSync(base, { recursive: true });
    throw error;
  }
}
