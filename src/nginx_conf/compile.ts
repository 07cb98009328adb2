/**
 * A parsed nginx.conf compiled into the engine's model (`HttpConf`): the
 * `http` block's servers, their locations (nested, named, regex) and `if`
 * blocks, the rewrite programs, `upstream {}` and `map` blocks, with every
 * directive checked once. A directive the engine does not implement is
 * refused with its place; every refusal of the file is collected, so one
 * `--check` names them all. Harmless directives are warned about once.
 *
 * @module
 */

import {
  compileRegex,
  compileValue,
  type ComplexValue,
  constantValue,
  type FastcgiConf,
  type HttpConf,
  indexLocations,
  type Listen,
  type LocationConf,
  type MapConf,
  parseServerName,
  type ProxyPass,
  type ServerConf,
  type ServerName,
  type UpstreamConf,
  type UpstreamServerConf,
  ValueError,
  Variables,
} from "../engine/mod.ts";
import { compileGeo } from "./compile_geo.ts";
import { compileProgram, isRewriteDirective } from "./compile_rewrite.ts";
import { Level } from "./compile_level.ts";
import { fastcgiSettings, fastcgiTargetRefusal } from "./compile_fastcgi.ts";
import { LogsSeen } from "./compile_logs.ts";
import { ErrorLogsSeen } from "./compile_error_logs.ts";
import { AccessCompiler } from "./compile_access.ts";
import {
  MAX_CONSISTENT_HASH_WEIGHT,
  MAX_UPSTREAM_KEEPALIVE,
  pathProblem,
} from "../config/mod.ts";
import { hostAddress } from "../access/mod.ts";
import { proxyBindVerdict } from "./proxy_bind.ts";
import { nextUpstreamVerdict } from "./compile_next_upstream.ts";
import { typesFromDirectives } from "../static/mod.ts";
import { COMBINED, compileLogFormat, type LogFormat } from "../log/mod.ts";
import {
  type LocationIdentity,
  locationSettings,
  type SettingsContext,
} from "./compile_location.ts";
import type { Directive } from "./parser.ts";

/** An `upstream{}` block's balancing method. */
type UpstreamBalance = NonNullable<UpstreamConf["balance"]>;
import { prefixed } from "./paths.ts";
import {
  checkSslPorts,
  checkSslTuning,
  PLAIN_ON_TLS_PORT,
  serverSsl,
  type SslContext,
  sslOn,
} from "./compile_ssl.ts";
import { dirname } from "node:path";
import { listenParameter, listenSetting, nginxTimeMs } from "./values.ts";

/** The outcome of compiling. */
export interface CompileResult {
  /** The model, when nothing was refused. */
  conf: HttpConf | null;
  /** `[warn]` texts, each ending `in FILE:LINE`. */
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

/** Directives the engine implements: the table's `map` ones are handled here. */
const HANDLED_HERE = new Set([
  "http",
  "server",
  "location",
  "upstream",
  "map",
  "geo",
]);

class Compiler {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  readonly #said = new Set<string>();
  readonly upstreams = new Map<string, UpstreamConf>();
  readonly fastcgiUpstreams = new Map<string, UpstreamConf>();
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

  /** The table's verdict for a directive; `false` when it is refused or only warned. */
  check(d: Directive): boolean {
    const spec = d.spec;
    if (d.name === "keepalive_timeout" && /^0+[a-z]*$/i.test(d.args[0]!)) {
      this.fail(
        d,
        '"keepalive_timeout 0" is not supported: the gateway keeps client connections open',
      );
      return false;
    }
    if (
      (d.name === "root" || d.name === "alias") && !d.args[0]!.includes("$")
    ) {
      const problem = pathProblem(d.args[0]!);
      if (problem !== null) {
        this.fail(d, `"${d.name} ${d.args[0]}" is not supported: ${problem}`);
        return false;
      }
    }
    if (d.name === "stub_status") {
      // Deno.serve shows no connection table (README, stub-status).
      this.warn(
        d,
        `"stub_status": active connections are those with a request being answered; idle keep-alive connections are not seen (Waiting 0)`,
      );
    }
    const words = nextUpstreamVerdict(d);
    if (words !== null) {
      for (const warning of words.warnings) this.warn(d, warning);
      if (words.error !== null) {
        this.fail(d, words.error);
        return false;
      }
    }
    if (d.name === "proxy_bind") {
      const verdict = proxyBindVerdict(d.args);
      if (verdict === "default") return false;
      if (verdict !== "warn") {
        this.fail(
          d,
          `"${d.name} ${
            d.args.join(" ")
          }" is not supported: ${verdict.refused}`,
        );
        return false;
      }
    }
    if (spec === undefined || spec.disposition === "map") return true;
    if (spec.disposition === "warn") {
      this.warn(d, `"${d.name}" is ignored: ${spec.why}`);
    } else if (spec.disposition === "emerg") {
      this.fail(d, `"${d.name}" is not supported: ${spec.why}`);
    } else if (d.args.join(" ").toLowerCase() !== spec.defaultValue) {
      this.fail(
        d,
        `"${d.name} ${
          d.args.join(" ")
        }" is not supported: the gateway behaves as "${d.name} ${spec.defaultValue}"`,
      );
    }
    return false;
  }

  /** Keeps the directives of a block the engine reads, checking each. */
  accepted(block: readonly Directive[]): Directive[] {
    return block.filter((d) => HANDLED_HERE.has(d.name) || this.check(d));
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
    const maps = this.maps(block);
    const names = setNames(block);
    this.scope = new Variables(maps, names.set, names.captures);
    this.settings = {
      scope: this.scope,
      prefix: this.options.prefix,
      fail: (d, message) => this.fail(d, message),
      warn: (d, message) => this.warn(d, message),
      types: (d) => {
        const table = typesFromDirectives(d.block ?? []);
        // nginx warns about each extension given twice, at the block.
        for (const w of table.warnings) this.warn(d, w);
        return table.types;
      },
      proxyPass: (d) => this.proxyPass(d),
      fastcgiPass: (d) => this.fastcgiPass(d),
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
    this.compileMaps(block, maps);
    for (const d of block) if (d.name === "log_format") this.logFormat(d);
    for (const d of block) if (d.name === "upstream") this.upstream(d);
    // The main level holds only what http inherits from it (error_log).
    const mainLevel = new Level(
      null,
      main.filter((d) => d.name === "error_log"),
    );
    const errorLogs = this.errorLogs.errorLogs(mainLevel);
    const httpLevel = new Level(mainLevel, block);
    checkSslTuning(block, this.ssl);
    const servers = block.filter((d) => d.name === "server").map((d) =>
      this.server(d, httpLevel)
    );
    if (servers.length === 0) {
      this.fail(http[0]!, 'no "server" block in "http"');
    }
    checkSslPorts(servers, this.ssl, this.sslRefused);
    access.finish();
    // The start's lines go to a file the gateway opens: the main level's
    // first (a `stderr` one has no file: nginx's default is used then).
    const errorLog = errorLogs.find((log) => log.path !== "stderr");
    return {
      servers,
      upstreams: this.upstreams,
      ...(this.fastcgiUpstreams.size > 0
        ? { fastcgiUpstreams: this.fastcgiUpstreams }
        : {}),
      maps,
      logFormats: this.formats,
      accessLog: this.accessLog(servers),
      accessLogFiles: this.logs.files,
      accessNeedsFields: this.logs.needsFields,
      accessCopiesFields: this.logs.copiesFields,
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

  // --- map ---------------------------------------------------------------

  maps(block: readonly Directive[]): Map<string, MapConf> {
    const maps = new Map<string, MapConf>();
    for (const d of block) {
      if (d.name !== "map" && d.name !== "geo") continue;
      // map's second argument; geo's last (`geo [$address] $variable`).
      const name = d.args.at(-1)!;
      if (!name.startsWith("$")) {
        this.fail(d, `invalid variable name "${name}"`);
        continue;
      }
      // Filled by compileMaps: a map's values may read other maps.
      maps.set(name.slice(1).toLowerCase(), {
        source: constantValue(""),
        exact: new Map(),
        regexes: [],
        defaultValue: constantValue(""),
      });
    }
    return maps;
  }

  compileMaps(block: readonly Directive[], maps: Map<string, MapConf>): void {
    for (const d of block) {
      if (d.name === "geo" && d.args.at(-1)!.startsWith("$")) {
        const name = d.args.at(-1)!.slice(1).toLowerCase();
        Object.assign(maps.get(name)!, compileGeo(d, this));
        continue;
      }
      if (d.name !== "map" || !d.args[1]!.startsWith("$")) continue;
      const conf = maps.get(d.args[1]!.slice(1).toLowerCase())! as {
        -readonly [K in keyof MapConf]: MapConf[K];
      };
      conf.source = this.value(d, d.args[0]!);
      const exact = new Map<string, ComplexValue>();
      const regexes: { regex: RegExp; value: ComplexValue }[] = [];
      for (const entry of d.block ?? []) {
        const [key, val] = [entry.name, entry.args[0]];
        if (key === "hostnames" || key === "volatile") continue;
        if (val === undefined || entry.args.length > 1) {
          this.fail(entry, `invalid number of the map parameters`);
          continue;
        }
        if (key === "default") {
          conf.defaultValue = this.value(entry, val);
        } else if (key.startsWith("~")) {
          const caseless = key.startsWith("~*");
          try {
            regexes.push({
              regex: compileRegex(key.slice(caseless ? 2 : 1), caseless),
              value: this.value(entry, val),
            });
          } catch (error) {
            if (!(error instanceof ValueError)) throw error;
            this.fail(entry, error.message);
          }
        } else {
          exact.set(
            key.startsWith("\\") ? key.slice(1) : key,
            this.value(entry, val),
          );
        }
      }
      conf.exact = exact;
      conf.regexes = regexes;
    }
  }

  value(d: Directive, text: string): ComplexValue {
    try {
      return compileValue(text, this.scope);
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      this.fail(d, error.message);
      return constantValue(text);
    }
  }

  // --- upstream ----------------------------------------------------------

  /**
   * The key of the `upstream{}` block a name means, in any case, as
   * `ngx_http_upstream_add` compares names (`ngx_strncasecmp`); `null` when
   * no block has it.
   */
  namedUpstream(name: string): string | null {
    if (this.upstreams.get(name)?.explicit) return name;
    const folded = name.toLowerCase();
    for (const [key, conf] of this.upstreams) {
      if (conf.explicit && key.toLowerCase() === folded) return key;
    }
    return null;
  }

  upstream(d: Directive): void {
    const name = d.args[0]!;
    if (this.namedUpstream(name) !== null) {
      this.fail(d, `duplicate upstream "${name}"`);
      return;
    }
    const servers: UpstreamServerConf[] = [];
    let keepalive = 0;
    let hashed = false;
    for (const entry of this.accepted(d.block ?? [])) {
      if (entry.name === "ip_hash" || entry.name === "hash") hashed = true;
      if (entry.name === "keepalive") {
        keepalive = Number(entry.args[0]);
        if (!Number.isSafeInteger(keepalive) || keepalive < 1) {
          this.fail(
            entry,
            `invalid value "${entry.args[0]}" in "keepalive" directive`,
          );
        } else if (keepalive > MAX_UPSTREAM_KEEPALIVE) {
          this.fail(
            entry,
            `"keepalive ${
              entry.args[0]
            }" is not supported: the gateway keeps up to ${MAX_UPSTREAM_KEEPALIVE} idle connections (memory is bounded)`,
          );
        }
      } else if (entry.name === "server") {
        const server = this.upstreamServer(entry);
        // ip_hash and hash keep no backups (their flags lack
        // NGX_HTTP_UPSTREAM_BACKUP); one written before them is kept.
        if (server?.backup && hashed) {
          this.fail(
            entry,
            'balancing method does not support parameter "backup"',
          );
        } else if (server) servers.push(server);
      }
    }
    if (servers.length === 0) {
      this.fail(d, `no servers are inside upstream`);
      return;
    }
    const { balance, hashKey } = this.balanceMethod(d.block ?? []);
    let weight = 0;
    for (const server of servers) weight += server.weight;
    if (
      balance === "consistent-hash" && weight > MAX_CONSISTENT_HASH_WEIGHT
    ) {
      this.fail(
        d,
        `"hash ... consistent" with a total weight of ${weight} is not supported: the gateway makes 160 points per weight unit, up to a total weight of ${MAX_CONSISTENT_HASH_WEIGHT} (lower the weights)`,
      );
      return;
    }
    this.upstreams.set(name, {
      name,
      servers,
      keepalive,
      explicit: true,
      balance,
      ...(hashKey ? { hashKey } : {}),
    });
  }

  /**
   * The block's balancing method: the last of `ip_hash`, `least_conn` and
   * `hash KEY [consistent]` (each replaces the one before, as
   * `uscf->peer.init_upstream` is), round-robin when none.
   */
  balanceMethod(
    block: readonly Directive[],
  ): { balance: UpstreamBalance; hashKey: ComplexValue | null } {
    let balance: UpstreamBalance = "round-robin";
    let hashKey: ComplexValue | null = null;
    for (const x of block) {
      if (x.name === "ip_hash") balance = "ip-hash";
      else if (x.name === "least_conn") balance = "least-conn";
      else if (x.name === "hash") {
        const [key = "", param] = x.args;
        if (param !== undefined && param !== "consistent") {
          // ngx_http_upstream_hash's words.
          this.fail(x, `invalid parameter "${param}"`);
          continue;
        }
        balance = param === undefined ? "hash" : "consistent-hash";
        hashKey = this.value(x, key);
      }
    }
    const hashed = balance === "hash" || balance === "consistent-hash";
    return { balance, hashKey: hashed ? hashKey : null };
  }

  upstreamServer(d: Directive): UpstreamServerConf | null {
    const [address = "", ...params] = d.args;
    const hostPort = splitHostPort(address);
    if (hostPort === null) {
      this.fail(d, `invalid host in upstream "${address}"`);
      return null;
    }
    const server: UpstreamServerConf = {
      address: hostPort.port === 80 && !/:\d+$/.test(address)
        ? `${address}:80`
        : address,
      server: address,
      ...hostPort,
      weight: 1,
      maxFails: 1,
      failTimeoutMs: 10_000,
      backup: false,
      down: false,
    };
    for (const param of params) {
      const [key, val = ""] = param.split("=", 2) as [string, string?];
      if (key === "weight" && /^[1-9]\d{0,6}$/.test(val)) {
        server.weight = Number(val);
      } else if (key === "max_fails" && /^\d{1,9}$/.test(val)) {
        server.maxFails = Number(val);
      } else if (key === "fail_timeout" && nginxTimeMs(val) !== null) {
        server.failTimeoutMs = nginxTimeMs(val)!;
      } else if (param === "backup") server.backup = true;
      else if (param === "down") server.down = true;
      else if (key === "max_conns") {
        this.fail(
          d,
          `"server … ${param}" is not supported: the gateway does not limit connections per server`,
        );
      } else this.fail(d, `invalid parameter "${param}"`);
    }
    return server;
  }

  proxyPass(d: Directive): ProxyPass | null {
    const url = d.args[0]!;
    // With variables nginx evaluates the whole URL per request and parses
    // it then (ngx_http_proxy_eval). Variables after a literal host leave
    // the upstream known now, so only the URI part is evaluated; with
    // variables in the host or port the whole URL is, and the group found
    // per request.
    const dollar = url.indexOf("$");
    const m = /^([a-z]+):\/\/([^/?#]+)(.*)$/i.exec(
      dollar < 0 ? url : url.slice(0, dollar),
    );
    if (dollar >= 0 && (m === null || !uriFollows(m[3]!, url.slice(dollar)))) {
      const scheme = /^([a-z]+):\/\//i.exec(url.slice(0, dollar))?.[1];
      if (scheme !== undefined && scheme.toLowerCase() !== "http") {
        this.fail(
          d,
          `"proxy_pass ${url}" is not supported: the gateway forwards over http:// only`,
        );
        return null;
      }
      return {
        scheme: "http",
        group: "",
        proxyHost: "",
        uri: null,
        dynamic: null,
        url: this.value(d, url),
        text: url,
      };
    }
    if (m === null) {
      this.fail(d, `invalid URL prefix in "${url}"`);
      return null;
    }
    if (m[1]!.toLowerCase() !== "http") {
      this.fail(
        d,
        `"proxy_pass ${url}" is not supported: the gateway forwards over http:// only`,
      );
      return null;
    }
    const host = m[2]!;
    const dynamic = dollar < 0
      ? null
      : this.value(d, url.slice(`${m[1]}://${host}`.length));
    const uri = m[3] === "" || dynamic !== null ? null : m[3]!;
    let group = this.namedUpstream(host) ?? host;
    if (group === host && !this.upstreams.get(host)?.explicit) {
      const hostPort = splitHostPort(host);
      if (hostPort === null) {
        this.fail(d, `invalid host in "${url}"`);
        return null;
      }
      group = `${host}${/:\d+$/.test(host) ? "" : ":80"}`;
      if (!this.upstreams.has(group)) {
        this.upstreams.set(group, implicitGroup(group, hostPort));
      }
    }
    return {
      scheme: "http",
      group,
      // ngx_http_proxy_set_vars: the default port is left out of Host.
      proxyHost: host.replace(/:80$/, ""),
      uri,
      dynamic,
      url: null,
      // With variables nginx's default `proxy_redirect` reads the URL as
      // written (ngx_http_proxy_merge_loc_conf).
      text: dynamic === null ? `http://${host}` : url,
    };
  }

  /** The group a `fastcgi_pass` names, registered; `null` when refused. */
  fastcgiPass(d: Directive): string | null {
    const target = d.args[0]!;
    const refused = fastcgiTargetRefusal(target);
    if (refused !== null) {
      this.fail(d, refused);
      return null;
    }
    const key = this.namedUpstream(target);
    if (key !== null) {
      this.fastcgiUpstreams.set(key, this.upstreams.get(key)!);
      return key;
    }
    const hostPort = splitHostPort(target);
    if (hostPort === null || !/:\d+$/.test(target)) {
      // nginx resolves a name without an upstream{} at start and needs a
      // port for FastCGI (ngx_http_upstream_add, `no port in upstream`).
      this.fail(d, `no port in upstream "${target}"`);
      return null;
    }
    if (!this.fastcgiUpstreams.has(target)) {
      this.fastcgiUpstreams.set(target, implicitGroup(target, hostPort));
    }
    return target;
  }

  // --- server and locations ---------------------------------------------

  server(d: Directive, http: Level): ServerConf {
    const block = this.accepted(d.block!);
    const level = new Level(http, block);
    const listens = block.filter((x) => x.name === "listen").flatMap((x) =>
      this.listen(x)
    );
    if (listens.length === 0) {
      listens.push({
        hostname: "0.0.0.0",
        port: 80,
        defaultServer: false,
        ssl: false,
        http2: false,
        text: "*:80",
      });
    }
    checkSslTuning(block, this.ssl);
    // The deprecated `ssl on;` makes every socket of the server TLS.
    if (sslOn(level)) { for (const l of listens) l.ssl = true; }
    const ssl = serverSsl(level, this.ssl);
    const names: ServerName[] = [];
    for (const x of block.filter((x) => x.name === "server_name")) {
      for (const arg of x.args) {
        if (arg === "" || arg === "_") continue;
        // The name goes into error lines as it is: nginx warns about
        // such names ("suspicious symbols"); the gateway refuses them.
        // deno-lint-ignore no-control-regex
        if (/[\x00-\x20"\x7f]/.test(arg)) {
          this.fail(x, `server name "${arg}" has suspicious symbols`);
          continue;
        }
        try {
          names.push(parseServerName(arg));
        } catch (error) {
          if (!(error instanceof ValueError)) throw error;
          this.fail(x, error.message);
        }
      }
    }
    const firstName = block.find((x) => x.name === "server_name")?.args[0] ??
      "";
    const conf = this.location(level, {
      match: "prefix",
      name: "",
      regex: null,
      place: null,
    });
    const named = new Map<string, LocationConf>();
    for (const loc of block.filter((x) => x.name === "location")) {
      const name = loc.args.length === 1 ? loc.args[0]! : "";
      if (name.startsWith("@")) {
        named.set(name, this.nestedLocation(loc, level, conf));
      }
    }
    const server: ServerConf = {
      listens,
      names,
      serverName: firstName.startsWith("~") ? "" : firstName,
      conf,
      named,
      place: { file: d.file, line: d.line },
      ...(ssl === undefined ? {} : { ssl }),
    };
    if (ssl === undefined && level.get("ssl_certificate").length > 0) {
      this.sslRefused.add(server);
    }
    return server;
  }

  listen(d: Directive): Listen[] {
    const [address = "", ...params] = d.args;
    const parsed = listenSetting(address);
    if (!parsed.ok) {
      this.fail(d, parsed.error);
      return [];
    }
    const text = parsed.value;
    const colon = text.lastIndexOf(":");
    let hostname = text.slice(0, colon);
    const port = Number(text.slice(colon + 1));
    // Port 0 (any free port) is the gateway's own, for tests and probes.
    if (!(port >= 0 && port <= 65535)) {
      this.fail(d, `invalid port in "${address}" of the "listen" directive`);
      return [];
    }
    if (hostname === "*") hostname = "0.0.0.0";
    // An address as nginx reads it (`127.0.0.010` is 127.0.0.10), bound as
    // nginx prints it: the system's resolver would read it as octal.
    hostname = hostAddress(hostname) ?? hostname;
    if (hostname.startsWith("[")) hostname = hostname.slice(1, -1);
    if (hostname === "localhost") hostname = "127.0.0.1";
    const listen: Listen = {
      hostname,
      port,
      defaultServer: false,
      ssl: false,
      http2: false,
      text: address,
    };
    for (const param of params) {
      if (param === "default_server" || param === "default") {
        listen.defaultServer = true;
      } else if (param === "ssl") {
        listen.ssl = true;
        this.warn(d, `"listen … ssl": ${PLAIN_ON_TLS_PORT}`);
      } else if (param === "http2") {
        listen.http2 = true;
      } else if (listenParameter(param) === "invalid") {
        this.fail(d, `invalid parameter "${param}"`);
      } else if (listenParameter(param) === "emerg") {
        this.fail(
          d,
          `"listen … ${param}" is not supported: the gateway serves HTTP/1.1 and HTTP/2 over TCP`,
        );
      } else {
        this.warn(
          d,
          `"listen … ${param}" is ignored: it only tunes how nginx does its work`,
        );
      }
    }
    return [listen];
  }

  /** A level's settings, its `if` blocks, its program and its nested locations. */
  location(level: Level, identity: LocationIdentity): LocationConf {
    const conf = locationSettings(level, identity, this.settings);
    const fastcgi = fastcgiSettings(this.settings, level);
    if (fastcgi !== undefined) {
      (conf as { fastcgi?: FastcgiConf }).fastcgi = fastcgi;
    }
    const nested: LocationConf[] = [];
    for (const d of level.block) {
      if (d.name !== "location") continue;
      const name = d.args.length === 1 ? d.args[0]! : "";
      if (name.startsWith("@")) {
        if (identity.name !== "") {
          this.fail(
            d,
            `named location "${name}" can be on the server level only`,
          );
        }
        continue;
      }
      nested.push(this.nestedLocation(d, level, conf));
    }
    (conf as { locations: LocationConf["locations"] }).locations =
      indexLocations(
        nested,
        this.options.caseless,
      );
    const program = compileProgram(level.block.filter(isRewriteDirective), {
      scope: this.scope,
      fail: (d, message) => this.fail(d, message),
      ifLevel: (d) => this.ifLocation(d, level, conf),
    });
    (conf as { rewrite: LocationConf["rewrite"] }).rewrite = program;
    return conf;
  }

  ifLocation(
    d: Directive,
    parent: Level,
    parentConf: LocationConf,
  ): LocationConf {
    const block = this.accepted(d.block ?? []);
    const level = new Level(parent, block);
    const conf = this.location(level, {
      match: "if",
      name: parentConf.name,
      regex: parentConf.regex,
      place: { file: d.file, line: d.line },
    });
    if (conf.proxyPass?.uri !== null && conf.proxyPass !== null) {
      this.failUriPart(block.find((x) => x.name === "proxy_pass")!);
    }
    // An `if` without its own handler keeps the location's.
    if (
      conf.proxyPass === null && parentConf.proxyPass !== null &&
      !block.some((x) => x.name === "proxy_pass")
    ) {
      (conf as { proxyPass: ProxyPass | null }).proxyPass =
        parentConf.proxyPass;
    }
    if (conf.fastcgi === undefined && parentConf.fastcgi !== undefined) {
      const inherited = fastcgiSettings(
        this.settings,
        level,
        parentConf.fastcgi.group,
      );
      if (inherited !== undefined) {
        (conf as { fastcgi?: FastcgiConf }).fastcgi = inherited;
      }
    }
    return conf;
  }

  failUriPart(d: Directive): void {
    this.fail(
      d,
      `"proxy_pass" cannot have URI part in location given by regular expression, or inside named location, or inside "if" statement, or inside "limit_except" block`,
    );
  }

  nestedLocation(
    d: Directive,
    parent: Level,
    parentConf: LocationConf,
  ): LocationConf {
    const identity = this.identity(d);
    const block = this.accepted(d.block ?? []);
    const level = new Level(parent, block);
    if (parentConf.match === "exact") {
      this.fail(
        d,
        `location "${identity.name}" cannot be inside the exact location "${parentConf.name}"`,
      );
    }
    if (
      identity.match !== "named" && identity.regex === null &&
      parentConf.name !== "" && parentConf.regex === null &&
      !identity.name.startsWith(parentConf.name)
    ) {
      this.fail(
        d,
        `location "${identity.name}" is outside location "${parentConf.name}"`,
      );
    }
    const conf = this.location(level, identity);
    if (
      conf.proxyPass !== null && conf.proxyPass.uri !== null &&
      (identity.regex !== null || identity.match === "named")
    ) {
      this.failUriPart(block.find((x) => x.name === "proxy_pass")!);
    }
    if (conf.alias !== null && identity.match === "named") {
      this.fail(d, `"alias" cannot be used in named location`);
    }
    return conf;
  }

  /** `location [=|~|~*|^~] uri` or `location @name` (ngx_http_core_location). */
  identity(d: Directive): LocationIdentity {
    const place = { file: d.file, line: d.line };
    let [mod, name] = d.args.length === 2 ? d.args : ["", d.args[0]!];
    if (mod === "" && name !== undefined) {
      for (const m of ["=", "~*", "^~", "~"]) {
        if (name.startsWith(m) && name.length > m.length) {
          mod = m;
          name = name.slice(m.length);
          break;
        }
      }
    }
    name ??= "";
    const regexOf = (caseless: boolean): RegExp | null => {
      try {
        return compileRegex(name!, caseless);
      } catch (error) {
        if (!(error instanceof ValueError)) throw error;
        this.fail(d, error.message);
        return /(?!)/;
      }
    };
    switch (mod) {
      case "=":
        return { match: "exact", name, regex: null, place };
      case "^~":
        return { match: "prefix-no-regex", name, regex: null, place };
      case "~":
        return { match: "regex", name, regex: regexOf(false), place };
      case "~*":
        return { match: "regex-caseless", name, regex: regexOf(true), place };
      case "":
        return name.startsWith("@")
          ? { match: "named", name, regex: null, place }
          : { match: "prefix", name, regex: null, place };
    }
    this.fail(d, `invalid location modifier "${mod}"`);
    return { match: "prefix", name, regex: null, place };
  }
}

/**
 * Whether the variables of a `proxy_pass` URL start within its URI part:
 * after a `/` or `?` the host has ended, and `$request_uri`, `$uri` and
 * `$document_uri` always start with `/`.
 */
function uriFollows(beforeVariable: string, fromVariable: string): boolean {
  if (beforeVariable !== "") return /^[/?]/.test(beforeVariable);
  return /^\$(?:request_uri|uri|document_uri|\{(?:request_uri|uri|document_uri)\})(?![A-Za-z0-9_])/i
    .test(fromVariable);
}

/** Names `set` assigns anywhere in the block (nginx registers them at parse time). */
function setNames(
  block: readonly Directive[],
): { set: Set<string>; captures: Set<string> } {
  const set = new Set<string>();
  const captures = new Set<string>();
  const walk = (list: readonly Directive[]): void => {
    for (const d of list) {
      if (d.name === "set" && d.args[0]?.startsWith("$")) {
        set.add(d.args[0].slice(1).toLowerCase());
      }
      if (d.block && d.name !== "types" && d.name !== "map") walk(d.block);
      // Named captures of regexes also become variables; nginx knows them
      // from the regex. They are read from the request's own table.
      if (d.name === "location" || d.name === "rewrite" || d.name === "if") {
        for (const arg of d.args) {
          for (const m of arg.matchAll(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g)) {
            captures.add(m[1]!.toLowerCase());
          }
        }
      }
    }
  };
  walk(block);
  return { set, captures };
}

function splitHostPort(
  text: string,
): { hostname: string; port: number } | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(text);
  if (m === null) return null;
  const port = m[2] === undefined ? 80 : Number(m[2]);
  if (port < 1 || port > 65535) return null;
  // An address as nginx reads it (`127.0.0.010` is 127.0.0.10), kept as
  // nginx prints it: the system's resolver would read it as octal.
  const host = (hostAddress(m[1]!) ?? m[1]!).replace(/^\[(.*)\]$/, "$1");
  return { hostname: host === "localhost" ? "127.0.0.1" : host, port };
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

/**
 * The group nginx makes for a `proxy_pass` or `fastcgi_pass` address that
 * names no `upstream{}` (ngx_http_upstream_add without a block): one
 * server, nginx's `server` defaults, no kept connections.
 */
function implicitGroup(
  address: string,
  hostPort: { hostname: string; port: number },
): UpstreamConf {
  return {
    name: address,
    servers: [{
      address,
      ...hostPort,
      weight: 1,
      maxFails: 1,
      failTimeoutMs: 10_000,
      backup: false,
      down: false,
    }],
    keepalive: 0,
    explicit: false,
  };
}
