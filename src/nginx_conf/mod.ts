/**
 * Running from a station's existing nginx.conf: reads the file (and what it
 * includes) as nginx for Windows does, with the prefix being the folder
 * above `conf`, and maps it onto the JSON config file's settings. Failures
 * are returned as data with nginx's message (`unexpected "}" in
 * C:\nginx\conf\nginx.conf:42`), for `main.ts` to print.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { compileHttp } from "./compile.ts";
import { formatConf } from "./format.ts";
import { requestReading } from "./map_body.ts";
import { builtInConf, type BuiltInSettings } from "./built_in.ts";

export { builtInConf, type BuiltInSettings } from "./built_in.ts";
import type { HttpConf } from "../engine/mod.ts";
import { loadCertificatePair, type PairIo } from "../tls/mod.ts";
import { type ConfIo, NginxConfError, parseNginxConf } from "./parser.ts";
import type { NginxSettings } from "./paths.ts";
import {
  ConfigFileRefusal,
  osErrorOf,
  readConfigText,
} from "../runtime/mod.ts";

export type { ConfIo } from "./parser.ts";
export { type ConfigPaths, configPaths } from "./config_paths.ts";
export type { NginxSettings } from "./paths.ts";

/** The outcome of reading an nginx.conf. */
export type NginxConfResult =
  | {
    ok: true;
    /** The process-level settings (listen, logs), paths absolute. */
    settings: NginxSettings;
    /** The compiled configuration the engine runs. */
    engine: HttpConf;
    /** The configuration as one nginx.conf text, includes in place. */
    text: string;
    /** `[warn]` texts, each ending `in FILE:LINE`. */
    warnings: string[];
    /** The nginx prefix used for relative paths. */
    prefix: string;
    /** The files read: the nginx.conf, then what it includes, each once. */
    files: string[];
  }
  | {
    ok: false;
    /** The first `[emerg]` text, ending `in FILE:LINE` when it has a place. */
    message: string;
    /** Every refusal of the file, the first being `message`. */
    errors?: string[];
    /** Warnings found before the error. */
    warnings: string[];
  };

/**
 * The largest nginx configuration file read: a station's nginx.conf and the
 * stock mime.types are a few KiB each, so 4 MiB is a thousand times a real
 * one while a mistaken `include` of a log or an image fails at once.
 */
export const NGINX_CONF_MAX_BYTES = 4 * 1024 * 1024;

/** The real file system: regular files only, up to the cap. */
export const DENO_CONF_IO: ConfIo = {
  readTextFile: (path) => readConfigText(path, NGINX_CONF_MAX_BYTES),
  readDirFiles: (path) =>
    [...Deno.readDirSync(path)].filter((e) => e.isFile).map((e) => e.name),
};

/**
 * The nginx prefix for a configuration file: the folder above the file's
 * folder (`C:\nginx` for `C:\nginx\conf\nginx.conf`), as nginx for Windows
 * takes its prefix from where `nginx.exe` sits beside `conf\`.
 *
 * @param confPath The file, absolute.
 * @returns The prefix.
 *
 * @example Usage
 * ```ts
 * import { nginxPrefix } from "./mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(nginxPrefix("/srv/nginx/conf/nginx.conf"), "/srv/nginx");
 * ```
 */
export function nginxPrefix(confPath: string): string {
  return dirname(dirname(confPath));
}

/**
 * Reads an nginx.conf and maps it onto the gateway's settings.
 *
 * @param path The file (relative paths start at the working directory).
 * @param io File access.
 * @returns The settings and warnings, or nginx's error message.
 *
 * @example Usage
 * ```ts
 * import { loadNginxConf } from "./mod.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const io = {
 *   readTextFile: () =>
 *     "http { server { listen 80; location /api/ { proxy_pass http://10.0.0.5:8080/; } } }",
 *   readDirFiles: () => [],
 * };
 * const result = loadNginxConf("/n/conf/nginx.conf", io);
 * deepStrictEqual(result.ok && result.settings.upstream, ["http://10.0.0.5:8080"]);
 * ```
 */
export function loadNginxConf(
  path: string,
  io: ConfIo = DENO_CONF_IO,
  pairIo?: PairIo,
): NginxConfResult {
  const file = resolve(path);
  const prefix = nginxPrefix(file);
  let directives;
  const files: string[] = [];
  const recorded: ConfIo = {
    readTextFile: (p) => {
      if (!files.includes(p)) files.push(p);
      return io.readTextFile(p);
    },
    readDirFiles: (p) => io.readDirFiles(p),
  };
  // Each directive's own refusal is collected, so one --check names all
  // of them (nginx stops at the first); the rest of the file is compiled
  // for its refusals too.
  const refused: string[] = [];
  try {
    directives = parseNginxConf(file, recorded, refused);
  } catch (error) {
    if (error instanceof NginxConfError) {
      const errors = [...refused, error.message];
      return { ok: false, message: errors[0]!, errors, warnings: [] };
    }
    if (error instanceof ConfigFileRefusal) {
      return { ok: false, message: error.message, warnings: [] };
    }
    const os = osErrorOf(error);
    const call = Deno.build.os === "windows" ? "CreateFile" : "open";
    return {
      ok: false,
      message: `${call}() "${file}" failed${
        os === undefined ? ` (${error})` : ` (${os.code}: ${os.text})`
      }`,
      warnings: [],
    };
  }
  let compiled;
  try {
    compiled = compileHttp(directives, {
      file,
      prefix,
      caseless: Deno.build.os === "windows",
    });
  } catch (error) {
    // A bug here must not end the gateway with a stack trace: say so as a
    // refusal of the file.
    return {
      ok: false,
      message: `cannot compile "${file}": ${
        String(error).replaceAll("\n", " ")
      }`,
      warnings: [],
    };
  }
  const reading = requestReading(directives, prefix);
  const warnings = [...compiled.warnings, ...reading.warnings];
  // The first is the one nginx stops at: a directive's own refusal comes
  // before anything checked once the file is read; the rest in file order.
  const all = [...refused, ...compiled.errors, ...reading.errors];
  const errors = all.length === 0
    ? all
    : [all[0]!, ...inFileOrder(all.slice(1), files)];
  const conf = compiled.conf;
  if (conf === null || errors.length > 0) {
    return { ok: false, message: errors[0]!, errors, warnings };
  }
  const certificates = loadCertificates(conf, pairIo);
  if (certificates !== null) {
    return { ok: false, message: certificates, warnings };
  }
  return {
    ok: true,
    prefix,
    files,
    settings: { ...engineSettings(conf), ...reading.settings },
    engine: conf,
    text: formatConf(directives),
    warnings,
  };
}

/**
 * Reads every server's certificate and key, as nginx loads them at start
 * for each server that names one (`ngx_http_ssl_merge_srv_conf`), each
 * pair once; the PEM texts go into the model for the listeners.
 *
 * @returns nginx's `[emerg]` message for the first pair that fails, or
 * `null`.
 */
function loadCertificates(conf: HttpConf, io?: PairIo): string | null {
  const loaded = new Map<string, { cert: string; key: string }>();
  for (const server of conf.servers) {
    const ssl = server.ssl;
    if (ssl === undefined) continue;
    const id = `${ssl.certificate}\0${ssl.certificateKey}`;
    let pem = loaded.get(id);
    if (pem === undefined) {
      const pair = loadCertificatePair(ssl, io);
      if (!pair.ok) return pair.message;
      pem = pair.pem;
      loaded.set(id, pem);
    }
    (ssl as { pem: typeof pem }).pem = pem;
  }
  return null;
}

/**
 * The process-level settings of a compiled configuration: what the gateway
 * binds and the logs it opens (the first server's first `listen`), and what
 * the built-in page and `--check` probe (the first proxied upstream).
 * No `serverName`: that setting is the built-in configuration's
 * `server_name`, and the engine's servers keep their own (a `*.x` or `~…`
 * name there is nginx's to read, not a setting to refuse).
 */
function engineSettings(conf: HttpConf): NginxSettings {
  const server = conf.servers[0]!;
  const listen = server.listens[0]!;
  const host = listen.hostname.includes(":")
    ? `[${listen.hostname}]`
    : listen.hostname;
  const settings: NginxSettings = {
    listen: `${host === "0.0.0.0" ? "*" : host}:${listen.port}`,
    errorLog: conf.errorLog.path,
    errorLogLevel: conf.errorLog.level,
    accessLog: conf.accessLog.path ?? "off",
    // The engine checks these per location and answers error_page itself.
    clientMaxBodySize: "0",
    errorPage: "off",
    spaFallback: "off",
  };
  if (server.conf.root.constant !== null) {
    settings.root = server.conf.root.constant;
  }
  const proxied = [...conf.upstreams.values()][0];
  if (proxied !== undefined) {
    // The servers in use; when every primary is `down` (nginx then sends
    // to the backups), the primaries, as the group's first servers.
    const up = proxied.servers.filter((s) => !s.down);
    const listed = up.some((s) => !s.backup)
      ? up
      : proxied.servers.filter((s) => !s.backup);
    settings.upstream = listed.map((s) =>
      `http://${
        s.hostname.includes(":") ? `[${s.hostname}]` : s.hostname
      }:${s.port}${s.backup ? " backup" : ""}`
    );
    if (proxied.explicit) settings.upstreamGroup = proxied.name;
  }
  return settings;
}

/**
 * The built-in configuration (`built_in.ts`) compiled: what the flags and
 * the JSON config run as.
 *
 * @param settings The validated settings.
 * @param options Match locations without regard to case (nginx for Windows).
 * @returns The compiled configuration.
 * @throws {Error} When the written text does not compile: a defect.
 */
export function compileBuiltIn(
  settings: BuiltInSettings,
  options: { caseless: boolean },
): HttpConf {
  const text = builtInConf(settings);
  const file = "station-gateway built-in configuration";
  const directives = parseNginxConf(file, {
    readTextFile: () => text,
    readDirFiles: () => [],
  });
  const result = compileHttp(directives, {
    file,
    prefix: dirname(settings.root),
    caseless: options.caseless,
  });
  if (result.conf === null) {
    throw new Error(
      `Cannot compile the built-in configuration: ${result.errors.join("; ")}`,
    );
  }
  return result.conf;
}

/**
 * Refusals in the order of the files read and their lines, so one
 * `--check` reads as the file does (the parser's, the compiler's and the
 * request settings' come apart); one without a place stays after them.
 */
function inFileOrder(errors: string[], files: readonly string[]): string[] {
  const place = (message: string): [number, number] => {
    // The last " in ": a message may quote one (`invalid value "x" in "gzip"`).
    const m = /.* in (.+):(\d+)$/.exec(message);
    const file = m === null ? -1 : files.indexOf(m[1]!);
    return file < 0 ? [files.length, 0] : [file, Number(m![2])];
  };
  return errors.map((message, i) => ({ message, i, at: place(message) }))
    .sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1] || a.i - b.i).map((
      e,
    ) => e.message);
}
