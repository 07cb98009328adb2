/**
 * A parsed nginx.conf compiled into the engine's model (`HttpConf`), stage
 * by stage in the order nginx reads it: every directive checked once
 * (`compile_check.ts`), the variables `map`, `geo` and `set` declare
 * (`compile_variables.ts`), `log_format`, `upstream {}` blocks
 * (`compile_upstream.ts`), then each server (`compile_server.ts`) with its
 * tree of locations (`compile_location_tree.ts`), whose `proxy_pass` and
 * `fastcgi_pass` resolve to groups (`compile_pass.ts`). A directive the
 * engine does not implement is refused with its place; every refusal of
 * the file is collected, so one `--check` names them all. Harmless
 * directives are warned about once.
 *
 * @module
 */

import {
  type ComplexValue,
  type HttpConf,
  type ServerConf,
  Variables,
} from "../engine/mod.ts";
import { Level } from "./compile_level.ts";
import { LogsSeen } from "./compile_logs.ts";
import { ErrorLogsSeen } from "./compile_error_logs.ts";
import { AccessCompiler } from "./compile_access.ts";
import { typesFromDirectives } from "../static/mod.ts";
import { COMBINED, compileLogFormat, type LogFormat } from "../log/mod.ts";
import { type SettingsContext, value } from "./compile_level_values.ts";
import type { Directive } from "./parser.ts";
import { prefixed } from "./paths.ts";
import {
  checkSslPorts,
  checkSslTuning,
  type SslContext,
} from "./compile_ssl.ts";
import { dirname } from "node:path";
import type { CompileContext } from "./compile_context.ts";
import { acceptedDirectives } from "./compile_check.ts";
import { compileMaps, declareMaps, setNames } from "./compile_variables.ts";
import { checkNameKeys, hashedNames } from "./server_names_check.ts";
import { Upstreams } from "./compile_upstream.ts";
import { fastcgiPass, type PassContext, proxyPass } from "./compile_pass.ts";
import { compileServer, type ServerContext } from "./compile_server.ts";
import { LocationTree } from "./compile_location_tree.ts";
import { ListenAddresses } from "./listen_addresses.ts";

/** The outcome of compiling. */
export interface CompileResult {
  /** The model, when nothing was refused. */
  conf: HttpConf | null;
  /**
   * `[warn]` texts, each ending `in FILE:LINE`, but for those nginx says
   * with no place (a server name hashed twice).
   */
  warnings: string[];
  /** `[emerg]` texts, each ending `in FILE:LINE`; empty when `conf` is set. */
  errors: string[];
}

/** Options for {@linkcode compileHttp}. */
export interface CompileOptions {
  /** The main file, for messages without a directive. */
  file: string;
  /** The nginx prefix. */
  prefix: string;
  /** Match locations without regard to case (nginx for Windows). */
  caseless: boolean;
  /**
   * The folder relative `auth_basic_user_file` paths start from (nginx's
   * conf prefix). @default {the folder of `file`}
   */
  confPrefix?: string;
}

/** The compiler's state while one configuration is compiled. */
class Compiler implements CompileContext {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  readonly #said = new Set<string>();
  /** Each level's `types {}` table, by the level's list of blocks. */
  readonly #types = new WeakMap<
    readonly Directive[],
    ReadonlyMap<string, string>
  >();
  readonly upstreams = new Upstreams(this);
  /** What resolving a `proxy_pass` or `fastcgi_pass` needs. */
  readonly #passes: PassContext = {
    fail: (d, message) => this.fail(d, message),
    value: (d, text) => this.value(d, text),
    upstreams: this.upstreams,
  };
  readonly formats = new Map<string, LogFormat>([["combined", COMBINED]]);
  scope!: Variables;
  settings!: SettingsContext;
  readonly logs = new LogsSeen({
    fail: (d, message) => this.fail(d, message),
    warn: (d, message) => this.warn(d, message),
    format: (name) => this.formats.get(name),
    scope: () => this.scope,
    readsFields: (text) => this.scope.valueReadsFields(text),
    prefix: () => this.options.prefix,
  });
  readonly errorLogs = new ErrorLogsSeen({
    fail: (d, message) => this.fail(d, message),
    warn: (d, message) => this.warn(d, message),
    prefix: () => this.options.prefix,
  });
  readonly ssl: SslContext;
  /** Servers whose `ssl_certificate` was refused. */
  readonly sslRefused = new Set<ServerConf>();
  constructor(readonly options: CompileOptions) {
    this.ssl = {
      // ngx_ssl_certificate() resolves against the configuration's
      // folder (conf_prefix), not the prefix.
      // A Windows path is cut by hand: tests compile one on Linux too.
      confPrefix: options.file.slice(
        0,
        Math.max(options.file.lastIndexOf("/"), options.file.lastIndexOf("\\")),
      ),
      fail: (d, message) => this.fail(d, message),
      failAs: (message) => this.errors.push(message),
      warn: (d, message) => this.warn(d, message),
    };
  }

  fail(d: Directive | null, message: string): void {
    const line = d === null
      ? `${message} in ${this.options.file}`
      : `${message} in ${d.file}:${d.line}`;
    // An inherited directive is read again for every location below it:
    // its refusal is said once.
    if (this.#said.has(line)) return;
    this.#said.add(line);
    this.errors.push(line);
  }

  warn(d: Directive, message: string): void {
    this.warnings.push(`${message} in ${d.file}:${d.line}`);
  }

  /** Keeps the directives of a block the engine reads, checking each. */
  accepted(block: readonly Directive[]): Directive[] {
    return acceptedDirectives(block, this);
  }

  compile(directives: readonly Directive[]): HttpConf | null {
    const main = this.accepted(directives);
    const http = main.filter((d) => d.name === "http");
    if (http.length === 0) {
      this.fail(null, `no "http" block: the gateway has nothing to serve`);
      return null;
    }
    if (http.length > 1) this.fail(http[1]!, '"http" directive is duplicate');
    const block = this.accepted(http[0]!.block!);
    const maps = declareMaps(block, this);
    const names = setNames(block, (d, message) => this.fail(d, message));
    this.scope = new Variables(maps, names.set, names.captures);
    this.settings = {
      scope: this.scope,
      prefix: this.options.prefix,
      fail: (d, message) => this.fail(d, message),
      warn: (d, message) => this.warn(d, message),
      types: (blocks) => {
        // A level's table is built once, however many locations inherit
        // it, so nginx's warning for an extension given twice is said once.
        const built = this.#types.get(blocks);
        if (built !== undefined) return built;
        let types: ReadonlyMap<string, string> = new Map();
        for (const d of blocks) {
          const table = typesFromDirectives(d.block ?? [], types);
          // nginx warns about each extension given twice, at the block.
          for (const w of table.warnings) this.warn(d, w);
          types = table.types;
        }
        this.#types.set(blocks, types);
        return types;
      },
      proxyPass: (d) => proxyPass(d, this.#passes),
      fastcgiPass: (d) => fastcgiPass(d, this.#passes),
      access: (level) => access.settings(level),
      accessLogs: (level) => this.logs.accessLogs(level),
      errorLogs: (level) => this.errorLogs.errorLogs(level),
    };
    const access = new AccessCompiler({
      scope: this.scope,
      confPrefix: this.options.confPrefix ?? dirname(this.options.file),
      fail: (d, message) =>
        d === null ? this.errors.push(message) : this.fail(d, message),
    });
    access.zones(block);
    compileMaps(block, maps, this);
    for (const d of block) if (d.name === "log_format") this.logFormat(d);
    for (const d of block) if (d.name === "upstream") this.upstreams.add(d);
    // The main level holds only what http inherits from it (error_log).
    const mainLevel = new Level(
      null,
      main.filter((d) => d.name === "error_log"),
    );
    const errorLogs = this.errorLogs.errorLogs(mainLevel);
    const httpLevel = new Level(mainLevel, block);
    checkSslTuning(block, this.ssl);
    const serverContext: ServerContext = {
      http: httpLevel,
      fail: (d, message) => this.fail(d, message),
      warn: (d, message) => this.warn(d, message),
      accepted: (block) => this.accepted(block),
      ssl: this.ssl,
      sslRefused: this.sslRefused,
      listenAddresses: new ListenAddresses(),
      locations: new LocationTree({
        fail: (d, message) => this.fail(d, message),
        accepted: (block) => this.accepted(block),
        settings: this.settings,
        caseless: this.options.caseless,
      }),
    };
    const serverBlocks = block.filter((d) => d.name === "server");
    const servers = serverBlocks.map((d) => compileServer(d, serverContext));
    if (servers.length === 0) {
      this.fail(http[0]!, 'no "server" block in "http"');
    }
    checkSslPorts(servers, this.ssl, this.sslRefused);
    checkNameKeys(
      servers.map((s, i) => ({
        listens: s.listens,
        names: hashedNames(serverBlocks[i]!),
      })),
      (message) => this.fail(null, message),
      // nginx says it as it builds the hash, with no place in the file.
      (message) => this.warnings.push(message),
    );
    access.finish();
    this.upstreams.finish();
    // The start's lines go to a file the gateway opens: the main level's
    // first (a `stderr` one has no file: nginx's default is used then).
    const errorLog = errorLogs.find((log) => log.path !== "stderr");
    return {
      servers,
      upstreams: this.upstreams.groups,
      ...(this.upstreams.fastcgiGroups.size > 0
        ? { fastcgiUpstreams: this.upstreams.fastcgiGroups }
        : {}),
      maps,
      logFormats: this.formats,
      accessLog: this.accessLog(servers),
      accessLogFiles: this.logs.files,
      accessNeedsFields: this.logs.needsFields,
      accessCopiesFields: this.logs.copiesFields,
      accessCountsRequest: this.logs.countsRequest,
      accessDiscardsBody: this.logs.discardsBody,
      errorLog: {
        path: errorLog?.path ??
          prefixed(this.options.prefix, "logs/error.log"),
        level: errorLog?.level ?? "error",
      },
      errorLogs,
      errorLogFiles: this.errorLogs.files,
      errorLogFloor: this.errorLogs.floor,
      caseless: this.options.caseless,
      prefix: this.options.prefix,
      statusPath: block.find((d) => d.name === "station_status")?.args[0] ??
        null,
    };
  }

  // --- logs ------------------------------------------------------------

  /** `log_format name [escape=…] string …` (ngx_http_log_set_format). */
  logFormat(d: Directive): void {
    const [name = "", ...args] = d.args;
    if (this.formats.has(name)) {
      this.fail(d, `duplicate "log_format" name "${name}"`);
      return;
    }
    const result = compileLogFormat(name, args, this.scope);
    if (!result.ok) {
      this.fail(d, result.error);
      return;
    }
    this.formats.set(name, result.format);
  }

  /**
   * The access log of what neither a location nor a server's logs answer
   * (the status endpoint, an answer to an unexpected exception): the first
   * server's own first log. A request refused before routing is logged
   * with its socket's default server's logs (`EngineRoute.refused`).
   */
  accessLog(servers: readonly ServerConf[]): HttpConf["accessLog"] {
    if (servers.length === 0) {
      return {
        path: prefixed(this.options.prefix, "logs/access.log"),
        format: COMBINED,
      };
    }
    const first = servers[0]!.conf.accessLogs[0];
    return {
      path: first?.path ?? null,
      format: first?.format ?? COMBINED,
    };
  }

  value(d: Directive, text: string): ComplexValue {
    return value(this, d, text);
  }
}

/**
 * Compiles a parsed configuration.
 *
 * @param directives The top-level directives.
 * @param options The main file, the prefix, caseless matching.
 * @returns The model, or every refusal.
 */
export function compileHttp(
  directives: readonly Directive[],
  options: CompileOptions,
): CompileResult {
  const compiler = new Compiler(options);
  const conf = compiler.compile(directives);
  return {
    conf: compiler.errors.length === 0 ? conf : null,
    warnings: compiler.warnings,
    errors: compiler.errors,
  };
}
