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
import { type LexError, type Statement, statements } from "./lexer.ts";
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
  // `split_clients` entries read as `map` ones (`50% value;`).
  "split_clients": "map",
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
/**
 * The most files one read opens, counting a file each time it is included:
 * a station has a handful, while a file that includes the next one twice
 * doubles the reads per level (2^16 at the depth limit) in a few bytes.
 */
export const MAX_INCLUDED_FILES = 1024;
/**
 * The most directives one read keeps (the stock `mime.types` has about
 * 110): a 4 MiB file of `a b;` lines would otherwise become about 800,000
 * objects.
 */
export const MAX_DIRECTIVES = 100_000;
/**
 * A backstop on the whole read's time, checked between statements: the
 * limits above already keep a read to well under a second.
 */
export const MAX_READ_MS = 10_000;
/** Statements between two looks at the clock. */
const CLOCK_EVERY = 4096;
const TOO_LONG = `reading the configuration took more than ${
  MAX_READ_MS / 1000
} seconds`;

interface Scope {
  context: Context;
  seen: Set<string>;
}

/**
 * Parses an nginx configuration file and the files it includes.
 *
 * @param path The main file, absolute.
 * @param io File access.
 * @param refused Where a directive's own refusal goes (unknown, not
 * allowed here, wrong arguments or terminator, duplicate) when given:
 * nginx stops at the first, `--check` names every one of a file in one
 * run. The directive, and its block, is left out and the read goes on.
 * @returns The top-level directives.
 * @throws {NginxConfError} With nginx's message, on the first error (the
 * first that cannot be collected, when `refused` is given).
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
export function parseNginxConf(
  path: string,
  io: ConfIo,
  refused?: string[],
): Directive[] {
  return new Parser(io, dirname(path), refused).file(path, {
    context: "main",
    seen: new Set(),
  }, 0);
}

/** Pulls statements, turning a syntax error into nginx's message. */
type Next = () => Statement;

/**
 * One read. Recursion is bounded by the limits, never by the input: a block
 * is one `block()` frame (at most {@linkcode MAX_NESTING}) and an include
 * three more (at most {@linkcode MAX_INCLUDE_DEPTH}).
 */
class Parser {
  /** Blocks open now, bounded so no file can exhaust the stack. */
  private nesting = 0;
  /** Characters read so far, over every file. */
  private total = 0;
  /** Files opened so far, the main one included. */
  private files = 0;
  /** Directives kept so far. */
  private directives = 0;
  /** Statements read so far, for the clock. */
  private statements = 0;
  private deadline = performance.now() + MAX_READ_MS;

  constructor(
    private io: ConfIo,
    private confDir: string,
    private refused?: string[],
  ) {}

  file(path: string, scope: Scope, depth: number): Directive[] {
    this.files++;
    const text = this.io.readTextFile(path);
    this.total += text.length;
    if (this.total > MAX_TOTAL_CHARS) {
      throw new NginxConfError(
        `"${path}" takes the configuration past ${MAX_TOTAL_CHARS} characters`,
      );
    }
    const lexer = statements(text);
    const next: Next = () => {
      const item = lexer.next().value as Statement | LexError;
      if ("message" in item) {
        throw new NginxConfError(`${item.message} in ${path}:${item.line}`);
      }
      if (++this.statements % CLOCK_EVERY === 0 && this.late()) {
        throw new NginxConfError(`${TOO_LONG} in ${path}:${item.line}`);
      }
      return item;
    };
    return this.block(next, scope, path, depth, false);
  }

  /** Whether the read has run past {@linkcode MAX_READ_MS}. */
  late(): boolean {
    return performance.now() > this.deadline;
  }

  block(
    next: Next,
    scope: Scope,
    file: string,
    depth: number,
    inBlock: boolean,
  ): Directive[] {
    const out: Directive[] = [];
    for (;;) {
      const st = next();
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
        // One by one: spreading an 800,000-entry file into push()'s
        // arguments overflows the stack.
        for (const d of this.include(args[0]!, scope, depth, fail)) out.push(d);
        continue;
      }
      if (++this.directives > MAX_DIRECTIVES) {
        fail(`more than ${MAX_DIRECTIVES} directives`);
      }
      if (scope.context === "types" || scope.context === "map") {
        // `ngx_http_core_type`: every line is `type extension…;`; a `map`
        // line is `source value;` (ngx_http_map).
        if (st.end === "{") fail('unexpected "{"');
        out.push({ name, args, file, line: st.line });
        continue;
      }
      let spec: DirectiveSpec;
      try {
        spec = this.check(name, args, st, scope, fail);
      } catch (error) {
        if (this.refused === undefined || !(error instanceof NginxConfError)) {
          throw error;
        }
        // Collected: the statement (and the block it opens) is skipped.
        this.refused.push(error.message);
        if (st.end === "{") this.skipBlock(next, file);
        continue;
      }
      const directive: Directive = { name, args, file, line: st.line, spec };
      if (spec.block) {
        if (++this.nesting > MAX_NESTING) {
          fail(`blocks nested deeper than ${MAX_NESTING}`);
        }
        directive.block = this.block(
          next,
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

  /** Reads past the rest of a block whose `{` was just read. */
  skipBlock(next: Next, file: string): void {
    for (let depth = 1; depth > 0;) {
      const st = next();
      if (st.end === "{") depth++;
      else if (st.end === "}") depth--;
      else if (st.end === "eof") {
        throw new NginxConfError(
          `unexpected end of file, expecting "}" in ${file}:${st.line}`,
        );
      }
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
      if (this.late()) fail(TOO_LONG);
      if (this.files >= MAX_INCLUDED_FILES) {
        fail(`more than ${MAX_INCLUDED_FILES} files included`);
      }
      try {
        for (const d of this.file(path, scope, depth + 1)) out.push(d);
      } catch (error) {
        if (error instanceof NginxConfError) throw error;
        if (error instanceof ConfigFileRefusal) fail(error.message);
        fail(`${OPEN_CALL}() "${path}" failed${osSuffix(error)}`);
      }
    }
    return out;
  }
}
