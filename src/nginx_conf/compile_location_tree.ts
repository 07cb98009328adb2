/**
 * The tree of a server's locations: each level's settings
 * (`compile_location.ts`), its nested and named locations with the checks
 * nginx makes of where they stand (ngx_http_core_location), its `if`
 * blocks and its rewrite program, indexed as the engine searches them.
 *
 * @module
 */

import {
  compileRegex,
  type FastcgiConf,
  indexLocations,
  type LocationConf,
  type ProxyPass,
  ValueError,
} from "../engine/mod.ts";
import type { CompileContext } from "./compile_context.ts";
import { fastcgiSettings } from "./compile_fastcgi.ts";
import { Level } from "./compile_level.ts";
import type {
  LocationIdentity,
  SettingsContext,
} from "./compile_level_values.ts";
import { locationSettings } from "./compile_location.ts";
import { compileProgram, isRewriteDirective } from "./compile_rewrite.ts";
import type { Directive } from "./parser.ts";

/** What the location tree needs from the compiler. */
export interface LocationTreeContext
  extends Pick<CompileContext, "fail" | "accepted"> {
  /** What each level's settings are compiled with. */
  readonly settings: SettingsContext;
  /** Match locations without regard to case (nginx for Windows). */
  readonly caseless: boolean;
}

/** Compiles the levels of a server, made once per configuration. */
export class LocationTree {
  readonly #ctx: LocationTreeContext;

  /** @param ctx Where refusals go, the directive check and the settings. */
  constructor(ctx: LocationTreeContext) {
    this.#ctx = ctx;
  }

  /**
   * A level's settings, its `if` blocks, its program and its nested
   * locations.
   *
   * @param level The level (a server's own, or a location's).
   * @param identity How the level is matched.
   * @returns The level's model.
   */
  location(level: Level, identity: LocationIdentity): LocationConf {
    const conf = locationSettings(level, identity, this.#ctx.settings);
    const fastcgi = fastcgiSettings(this.#ctx.settings, level);
    if (fastcgi !== undefined) {
      (conf as { fastcgi?: FastcgiConf }).fastcgi = fastcgi;
    }
    const nested: LocationConf[] = [];
    for (const d of level.block) {
      if (d.name !== "location") continue;
      const name = d.args.length === 1 ? d.args[0]! : "";
      if (name.startsWith("@")) {
        if (identity.name !== "") {
          this.#ctx.fail(
            d,
            `named location "${name}" can be on the server level only`,
          );
        }
        continue;
      }
      nested.push(this.nested(d, level, conf));
    }
    (conf as { locations: LocationConf["locations"] }).locations =
      indexLocations(
        nested,
        this.#ctx.caseless,
      );
    const program = compileProgram(level.block.filter(isRewriteDirective), {
      scope: this.#ctx.settings.scope,
      fail: (d, message) => this.#ctx.fail(d, message),
      ifLevel: (d) => this.#ifLocation(d, level, conf),
    });
    (conf as { rewrite: LocationConf["rewrite"] }).rewrite = program;
    return conf;
  }

  /** An `if` block's level, which keeps its location's handler unless it has its own. */
  #ifLocation(
    d: Directive,
    parent: Level,
    parentConf: LocationConf,
  ): LocationConf {
    const block = this.#ctx.accepted(d.block ?? []);
    const level = new Level(parent, block);
    const conf = this.location(level, {
      match: "if",
      name: parentConf.name,
      regex: parentConf.regex,
      place: { file: d.file, line: d.line },
    });
    if (conf.proxyPass?.uri !== null && conf.proxyPass !== null) {
      this.#failUriPart(block.find((x) => x.name === "proxy_pass")!);
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
        this.#ctx.settings,
        level,
        parentConf.fastcgi.group,
      );
      if (inherited !== undefined) {
        (conf as { fastcgi?: FastcgiConf }).fastcgi = inherited;
      }
    }
    return conf;
  }

  /** nginx's refusal of a URI part where the URI matched is not known. */
  #failUriPart(d: Directive): void {
    this.#ctx.fail(
      d,
      `"proxy_pass" cannot have URI part in location given by regular expression, or inside named location, or inside "if" statement, or inside "limit_except" block`,
    );
  }

  /**
   * A `location` block inside a level: its identity, its settings and the
   * checks nginx makes of where it stands.
   *
   * @param d The `location` directive.
   * @param parent The level it stands in.
   * @param parentConf That level's model.
   * @returns The location's model.
   */
  nested(
    d: Directive,
    parent: Level,
    parentConf: LocationConf,
  ): LocationConf {
    const identity = this.#identity(d);
    const block = this.#ctx.accepted(d.block ?? []);
    const level = new Level(parent, block);
    if (parentConf.match === "exact") {
      this.#ctx.fail(
        d,
        `location "${identity.name}" cannot be inside the exact location "${parentConf.name}"`,
      );
    }
    if (
      identity.match !== "named" && identity.regex === null &&
      parentConf.name !== "" && parentConf.regex === null &&
      !identity.name.startsWith(parentConf.name)
    ) {
      this.#ctx.fail(
        d,
        `location "${identity.name}" is outside location "${parentConf.name}"`,
      );
    }
    const conf = this.location(level, identity);
    if (
      conf.proxyPass !== null && conf.proxyPass.uri !== null &&
      (identity.regex !== null || identity.match === "named")
    ) {
      this.#failUriPart(block.find((x) => x.name === "proxy_pass")!);
    }
    if (conf.alias !== null && identity.match === "named") {
      this.#ctx.fail(d, `"alias" cannot be used in named location`);
    }
    return conf;
  }

  /** `location [=|~|~*|^~] uri` or `location @name` (ngx_http_core_location). */
  #identity(d: Directive): LocationIdentity {
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
        this.#ctx.fail(d, error.message);
        return /(?!)/;
      }
    };
    switch (mod) {
      case "=":
        return { match: "exact", name, regex: null, place };
      case "^~":
        return { match: "prefix-no-regex", name, regex: null, place };
      case "~":
        // nginx for Windows compiles every location regex caseless
        // (ngx_http_core_regex_location: NGX_HAVE_CASELESS_FILESYSTEM);
        // no other regex of nginx.conf is.
        return {
          match: "regex",
          name,
          regex: regexOf(this.#ctx.caseless),
          place,
        };
      case "~*":
        return { match: "regex-caseless", name, regex: regexOf(true), place };
      case "":
        return name.startsWith("@")
          ? { match: "named", name, regex: null, place }
          : { match: "prefix", name, regex: null, place };
    }
    this.#ctx.fail(d, `invalid location modifier "${mod}"`);
    return { match: "prefix", name, regex: null, place };
  }
}
