/**
 * nginx's configuration parser, after `ngx_conf_parse` and
 * `ngx_conf_handler` (src/core/ngx_conf_file.c, nginx 1.22): statements
 * become a tree of directives, each checked as nginx checks it (known name,
 * allowed here, `;` or `{`, argument count, `on`/`off`, duplicates), and
 * `include` reads other files in place, globs included, relative to the
 * folder of the main file (`ngx_conf_full_name` with the conf prefix).
 * Messages are nginx's, ending `in FILE:LINE`.
 *
 * @module
 */

import { basename, dirname, isAbsolute, join } from "node:path";
import { type Context, DIRECTIVES, type DirectiveSpec } from "./directives.ts";
import { GLOB_CALL, globRegExp, OPEN_CALL, osSuffix } from "./glob.ts";
import { type Statement, tokenize } from "./lexer.ts";
import { ConfigFileRefusal } from "../runtime/mod.ts";

/** One directive of the tree. */
export interface Directive {
  /** Its name (for an entry of `types {}`, the media type). */
  name: string;
  /** Its arguments, unquoted. */
  args: string[];
  /** The file it is in. */
  file: string;
  /** The line nginx reports for it. */
  line: number;
  /** Its table entry (absent for `types {}` entries). */
  spec?: DirectiveSpec;
  /** The block's directives, for a block directive. */
  block?: Directive[];
}

/** File access, so tests can give files without a disk. */
export interface ConfIo {
  /** Reads a whole file; throws a Deno error when it cannot. */
  readTextFile(path: string): string;
  /** The names of the files (not folders) in a folder. */
  readDirFiles(path: string): string[];
}

/** The parse failed: nginx's message, `… in FILE:LINE`. */
export class NginxConfError extends Error {
  /** The warnings found before it (set by the mapping). */
  warnings: string[] = [];

  /** @param message nginx's message with its location. */
  constructor(message: string) {
    super(message);
    this.name = "NginxConfError";
  }
}

// `ngx_conf_set_*_slot` refuse a second one in the same block.
const NO_DUPLICATES = new Set([
  "root",
  "proxy_pass",
  "client_max_body_size",
  "proxy_connect_timeout",
  "proxy_send_timeout",
  "proxy_read_timeout",
  "default_type",
  "keepalive_timeout",
  "log_not_found",
  "sendfile",
  "gzip",
  "worker_processes",
  "proxy_http_version",
  "proxy_buffer_size",
  "try_files",
]);

const BLOCK_CONTEXT: Record<string, Context> = {
  events: "events",
  http: "http",
  server: "server",
  location: "location",
  upstream: "upstream",
  types: "types",
  map: "map",
  // `geo` entries read like `map` ones (ngx_http_geo_block).
  geo: "map",
  if: "if",
  "limit_except": "location",
};

const MAX_INCLUDE_DEPTH = 16;
/**
 * The most text one nginx.conf may read with its includes: each file is
 * capped on its own, and this stops a glob over many files (four stock
 * station files are under 20,000 characters together).
 */
const MAX_TOTAL_CHARS = 16 * 1024 * 1024;
const MAX_NESTING = 64;

interface Scope {
  context: Context;
  seen: Set<string>;
}

/**
 * Parses an nginx configuration file and the files it includes.
 *
 * @param path The main file, absolute.
 * @param io File access.
 * @returns The top-level directives.
 * @throws {NginxConfError} With nginx's message, on the first error.
 *
 * @example Usage
 * ```ts
 * import { parseNginxConf } from "./parser.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const io = {
 *   readTextFile: () => "events {}\nhttp { server { listen 80; } }\n",
 *   readDirFiles: () => [],
 * };
 * strictEqual(parseNginxConf("/n/conf/nginx.conf", io)[1]?.name, "http");
 * ```
 */
export function parseNginxConf(path: string, io: ConfIo): Directive[] {
  return new Parser(io, dirname(path)).file(path, {
    context: "main",
    seen: new Set(),
  }, 0);
}

class Parser {
  /** Blocks open now, bounded so no file can exhaust the stack. */
  private nesting = 0;
  /** Characters read so far, over every file. */
  private total = 0;

  constructor(private io: ConfIo, private confDir: string) {}

  file(path: string, scope: Scope, depth: number): Directive[] {
    const text = this.io.readTextFile(path);
    this.total += text.length;
    if (this.total > MAX_TOTAL_CHARS) {
      throw new NginxConfError(
        `"${path}" takes the configuration past ${MAX_TOTAL_CHARS} characters`,
      );
    }
    const tokens = tokenize(text);
    if (!Array.isArray(tokens)) {
      throw new NginxConfError(`${tokens.message} in ${path}:${tokens.line}`);
    }
    return this.block(tokens, { i: 0 }, scope, path, depth, false);
  }

  block(
    tokens: Statement[],
    cursor: { i: number },
    scope: Scope,
    file: string,
    depth: number,
    inBlock: boolean,
  ): Directive[] {
    const out: Directive[] = [];
    for (;;) {
      const st = tokens[cursor.i++]!;
      const fail = (message: string): never => {
        throw new NginxConfError(`${message} in ${file}:${st.line}`);
      };
      if (st.end === "}") {
        if (!inBlock) fail('unexpected "}"');
        return out;
      }
      if (st.end === "eof") {
        if (inBlock) fail('unexpected end of file, expecting "}"');
        return out;
      }
      const [name = "", ...args] = st.words;
      if (name === "include") {
        if (st.end !== ";") {
          fail('directive "include" is not terminated by ";"');
        }
        if (args.length !== 1) {
          fail('invalid number of arguments in "include" directive');
        }
        out.push(...this.include(args[0]!, scope, depth, fail));
        continue;
      }
      if (scope.context === "types" || scope.context === "map") {
        // `ngx_http_core_type`: every line is `type extension…;`; a `map`
        // line is `source value;` (ngx_http_map).
        if (st.end === "{") fail('unexpected "{"');
        out.push({ name, args, file, line: st.line });
        continue;
      }
      const spec = this.check(name, args, st, scope, fail);
      const directive: Directive = { name, args, file, line: st.line, spec };
      if (spec.block) {
        if (++this.nesting > MAX_NESTING) {
          fail(`blocks nested deeper than ${MAX_NESTING}`);
        }
        directive.block = this.block(
          tokens,
          cursor,
          {
            context: BLOCK_CONTEXT[name] ?? "location",
            seen: new Set(),
          },
          file,
          depth,
          true,
        );
        this.nesting--;
      }
      out.push(directive);
    }
  }

  check(
    name: string,
    args: string[],
    st: Statement,
    scope: Scope,
    fail: (message: string) => never,
  ): DirectiveSpec {
    const specs = DIRECTIVES.get(name);
    if (specs === undefined) return fail(`unknown directive "${name}"`);
    const spec = specs.find((s) => s.contexts.includes(scope.context));
    if (spec === undefined) {
      return fail(`"${name}" directive is not allowed here`);
    }
    if (!spec.block && st.end !== ";") {
      fail(`directive "${name}" is not terminated by ";"`);
    }
    if (spec.block && st.end !== "{") {
      fail(`directive "${name}" has no opening "{"`);
    }
    if (args.length < spec.min || args.length > spec.max) {
      fail(`invalid number of arguments in "${name}" directive`);
    }
    if (spec.flag && !/^(on|off)$/i.test(args[0]!)) {
      fail(
        `invalid value "${
          args[0]
        }" in "${name}" directive, it must be "on" or "off"`,
      );
    }
    if (NO_DUPLICATES.has(name)) {
      if (scope.seen.has(name)) fail(`"${name}" directive is duplicate`);
      scope.seen.add(name);
    }
    return spec;
  }

  include(
    pattern: string,
    scope: Scope,
    depth: number,
    fail: (message: string) => never,
  ): Directive[] {
    if (depth >= MAX_INCLUDE_DEPTH) {
      fail(`include nesting deeper than ${MAX_INCLUDE_DEPTH} files`);
    }
    const full = isAbsolute(pattern) ? pattern : join(this.confDir, pattern);
    let paths = [full];
    if (/[*?[]/.test(pattern)) {
      // ngx_open_glob: wildcards in the last part; no match is no error.
      const dir = dirname(full);
      const match = globRegExp(basename(full));
      try {
        paths = this.io.readDirFiles(dir).filter((n) => match.test(n)).sort()
          .map((n) => join(dir, n));
      } catch (error) {
        // glob(3) reports a missing folder as no match, which nginx
        // accepts (Debian's `include modules-enabled/*.conf`).
        if (!(error instanceof Deno.errors.NotFound)) {
          fail(`${GLOB_CALL}() "${full}" failed${osSuffix(error)}`);
        }
        paths = [];
      }
    }
    const out: Directive[] = [];
    for (const path of paths) {
      try {
        out.push(...this.file(path, scope, depth + 1));
      } catch (error) {
        if (error instanceof NginxConfError) throw error;
        if (error instanceof ConfigFileRefusal) fail(error.message);
        fail(`${OPEN_CALL}() "${path}" failed${osSuffix(error)}`);
      }
    }
    return out;
  }
}
