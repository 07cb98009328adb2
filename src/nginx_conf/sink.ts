/**
 * What the mapping steps share: the settings being built, the warnings, a
 * way to stop at the first `[emerg]`, and nginx's inheritance of simple
 * directives from `http` to `server` to `location`.
 *
 * @module
 */

import { pathProblem, type SettingsInput } from "../config/mod.ts";
import { contentTypeFor } from "../static/mod.ts";
import { type Directive, NginxConfError } from "./parser.ts";

/**
 * The settings an nginx.conf gives: the JSON config file's, error pages
 * included (`error_page` lines as nginx writes them, e.g.
 * `500 502 503 504 /50x.html`, each URI a file under `root`).
 */
export type NginxSettings = SettingsInput;

/** The simple directives in effect at one level, by name. */
export type Levels = ReadonlyMap<string, readonly Directive[]>;

/**
 * Directives a block does not take from its parent: `try_files` at server
 * level serves only requests no location matches (ngx_http_core_module has
 * no merge for it), and `proxy_pass` and `internal` belong to their
 * location.
 */
const NOT_INHERITED = new Set(["try_files", "proxy_pass", "internal"]);

/** The settings under construction and the findings so far. */
export class Sink {
  /** The settings so far. */
  readonly settings: NginxSettings = {};
  /** `[warn]` texts, each ending `in FILE:LINE`. */
  readonly warnings: string[] = [];

  /** @param prefix The nginx prefix (the folder above `conf`). */
  constructor(readonly prefix: string) {}

  /** Adds a warning about a directive. */
  warn(d: Directive, message: string): void {
    this.warnings.push(`${message} in ${d.file}:${d.line}`);
  }

  /** Stops with an `[emerg]` about a directive. */
  emerg(d: Directive, message: string): never {
    throw new NginxConfError(`${message} in ${d.file}:${d.line}`);
  }

  /**
   * Handles the directives the table decides alone (`warn`, `emerg`,
   * `default`).
   *
   * @returns Whether it was handled.
   */
  generic(d: Directive): boolean {
    const spec = d.spec;
    if (spec === undefined || spec.disposition === "map") return false;
    if (spec.disposition === "warn") {
      this.warn(d, `"${d.name}" is ignored: ${spec.why}`);
    } else if (spec.disposition === "emerg") {
      this.emerg(d, `"${d.name}" is not supported: ${spec.why}`);
    } else if (d.args.join(" ").toLowerCase() !== spec.defaultValue) {
      this.emerg(
        d,
        `"${d.name} ${
          d.args.join(" ")
        }" is not supported: the gateway behaves as "${d.name} ${spec.defaultValue}"`,
      );
    }
    return true;
  }

  /**
   * The levels in effect inside a block: the parent's, with each name the
   * block sets replaced (nginx's merge: a child's `error_page` or
   * `proxy_set_header` list replaces the parent's whole list).
   */
  levels(parent: Levels, block: readonly Directive[]): Levels {
    const own = new Map<string, Directive[]>();
    for (const d of block) {
      if (this.generic(d)) continue;
      if (d.name === "types") this.types(d);
      if (d.spec?.block) continue;
      if (d.name === "keepalive_timeout") this.keepaliveTimeout(d);
      // Appended in place: copying the list per directive is quadratic.
      const list = own.get(d.name);
      if (list === undefined) own.set(d.name, [d]);
      else list.push(d);
    }
    const inherited = [...parent].filter(([name]) => !NOT_INHERITED.has(name));
    return new Map([...inherited, ...own]);
  }

  /** Warns once about the extensions a `types {}` block types otherwise. */
  private types(d: Directive): void {
    const differ: string[] = [];
    for (const entry of d.block ?? []) {
      for (const ext of entry.args) {
        const ours = contentTypeFor(`x.${ext}`).split(";")[0];
        if (ours !== entry.name) differ.push(`${ext} (${entry.name})`);
      }
    }
    if (differ.length === 0) return;
    this.warn(
      d,
      `"types" is ignored: the gateway types files with its built-in table, which differs for ${differ.length} extension${
        differ.length === 1 ? "" : "s"
      }: ${differ.slice(0, 6).join(", ")}${differ.length > 6 ? ", …" : ""}`,
    );
  }

  private keepaliveTimeout(d: Directive): void {
    if (/^0+[a-z]*$/i.test(d.args[0]!)) {
      this.emerg(
        d,
        '"keepalive_timeout 0" is not supported: the gateway keeps client connections open',
      );
    }
    this.warn(
      d,
      '"keepalive_timeout" is ignored: the runtime closes idle client connections itself',
    );
  }

  /** A path from the file, absolute: relative ones start at the prefix. */
  path(d: Directive, value: string): string {
    if (value.includes("$")) {
      this.emerg(
        d,
        `"${d.name} ${value}" is not supported: the gateway does not evaluate variables`,
      );
    }
    const problem = pathProblem(value);
    if (problem !== null) {
      this.emerg(d, `"${d.name} ${value}" is not supported: ${problem}`);
    }
    return prefixed(this.prefix, value);
  }
}

/**
 * Resolves a path as `ngx_conf_full_name` does against the prefix: an
 * absolute path (`/x`, `C:\x`, `C:/x`, `\x` on Windows) stays.
 *
 * @param prefix The prefix, absolute, without a trailing separator.
 * @param value The path from the file.
 * @returns The absolute path.
 */
export function prefixed(prefix: string, value: string): string {
  const windows = /^[A-Za-z]:[\\/]/.test(prefix);
  const absolute = value.startsWith("/") ||
    (windows && (/^[A-Za-z]:[\\/]/.test(value) || value.startsWith("\\")));
  if (absolute) return value;
  const sep = windows ? "\\" : "/";
  return `${prefix}${sep}${windows ? value.replaceAll("/", "\\") : value}`;
}

/** The last directive of a name in effect, if any. */
export function last(levels: Levels, name: string): Directive | undefined {
  const list = levels.get(name);
  return list?.[list.length - 1];
}
