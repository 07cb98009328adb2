/**
 * The settings both locations share, as the gateway has one of each: the
 * error log, the access log and the error pages (`error_page` with its
 * `location = /50x.html`), with nginx's defaults for nginx for Windows
 * (`logs/error.log`, `logs/access.log` under the prefix).
 *
 * @module
 */

import { LOG_LEVELS } from "../log/mod.ts";
import type { Directive } from "./parser.ts";
import { last, type Levels, prefixed, type Sink } from "./sink.ts";

/** An exact-match location (`location = /50x.html`). */
export interface ExactLocation {
  /** The directive. */
  d: Directive;
  /** The URI it matches. */
  uri: string;
  /** The directives in effect inside it. */
  levels: Levels;
}

/** The directives of a name the two locations share (the gateway has one). */
function shared(
  sink: Sink,
  name: string,
  a: Levels,
  b: Levels,
): readonly Directive[] {
  const list = b.get(name) ?? [];
  const text = (l: readonly Directive[] | undefined) =>
    (l ?? []).map((d) => d.args.join(" ")).join(";");
  if (text(a.get(name)) !== text(list)) {
    sink.emerg(
      list[0] ?? a.get(name)![0]!,
      `a different "${name}" for / and /api/ is not supported: the gateway has one`,
    );
  }
  return list;
}

/** The one log of a kind the two locations share. */
function oneLog(
  sink: Sink,
  name: string,
  a: Levels,
  b: Levels,
): Directive | undefined {
  const list = shared(sink, name, a, b);
  if (list.length > 1) {
    sink.emerg(
      list[1]!,
      `a second "${name}" is not supported: the gateway writes one`,
    );
  }
  return list[0];
}

/** Maps `error_log` and `access_log`. */
export function mapLogs(sink: Sink, statics: Levels, proxy: Levels): void {
  const s = sink.settings;
  const error = oneLog(sink, "error_log", statics, proxy);
  s.errorLog = prefixed(sink.prefix, "logs/error.log");
  if (error !== undefined) {
    const [file = "", level = "error"] = error.args;
    if (/^(stderr|syslog:|memory:)/.test(file) || error.args.length > 2) {
      sink.emerg(
        error,
        `"error_log ${
          error.args.join(" ")
        }" is not supported: the gateway writes a file`,
      );
    }
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      sink.emerg(error, `invalid log level "${level}"`);
    }
    s.errorLog = sink.path(error, file);
    s.errorLogLevel = level;
  }
  const access = oneLog(sink, "access_log", statics, proxy);
  s.accessLog = prefixed(sink.prefix, "logs/access.log");
  if (access === undefined) return;
  const [file = "", format = "combined", ...params] = access.args;
  if (file === "off") {
    s.accessLog = "off";
    return;
  }
  if (format !== "combined") {
    sink.emerg(
      access,
      `"access_log … ${format}" is not supported: the gateway writes the "combined" format`,
    );
  }
  for (const param of params) {
    if (/^(buffer|flush)=/.test(param)) {
      sink.warn(
        access,
        `"access_log … ${param}" is ignored: the gateway writes each line at once`,
      );
    } else sink.emerg(access, `"access_log … ${param}" is not supported`);
  }
  s.accessLog = sink.path(access, file);
}

/** Maps `error_page` and the exact locations serving the pages. */
export function mapErrorPages(
  sink: Sink,
  statics: Levels,
  proxy: Levels,
  exact: readonly ExactLocation[],
): void {
  const list = shared(sink, "error_page", statics, proxy);
  const uris = new Set<string>();
  for (const d of list) {
    const uri = d.args[d.args.length - 1]!;
    for (const code of d.args.slice(0, -1)) {
      if (!/^\d+$/.test(code)) {
        sink.emerg(
          d,
          `"error_page … ${code}" is not supported: the gateway keeps the status`,
        );
      }
      if (Number(code) < 300 || Number(code) > 599) {
        sink.emerg(d, `value "${code}" must be between 300 and 599`);
      }
    }
    if (!uri.startsWith("/") || uri.includes("$")) {
      sink.emerg(
        d,
        `"error_page … ${uri}" is not supported: the gateway serves pages from root`,
      );
    }
    uris.add(uri);
  }
  // nginx without error_page sends its built-in pages: "off" here, since
  // the gateway's own default is the stock file's 50x.html line.
  sink.settings.errorPage = list.length > 0
    ? list.map((d) => d.args.join(" "))
    : "off";
  for (const loc of exact) {
    if (!uris.has(loc.uri)) {
      sink.emerg(
        loc.d,
        `"location = ${loc.uri}" is not supported: the gateway has it only for an "error_page"`,
      );
    }
    for (const d of loc.d.block!) {
      if (d.name !== "root" && d.name !== "internal") {
        sink.emerg(
          d,
          `"${d.name}" in "location = ${loc.uri}" is not supported`,
        );
      }
    }
    const root = last(loc.levels, "root");
    const path = root
      ? sink.path(root, root.args[0]!)
      : prefixed(sink.prefix, "html");
    if (path !== sink.settings.root) {
      sink.emerg(
        loc.d,
        `"location = ${loc.uri}" with another root is not supported: the gateway serves error pages from "${sink.settings.root}"`,
      );
    }
  }
}
