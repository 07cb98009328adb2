/**
 * `valid_referers` of a level (ngx_http_valid_referers), read for
 * `$invalid_referer`: the nearest level's lines, each argument `none`,
 * `blocked`, `server_names` (the server's names, its regex names apart),
 * a `~` regex (without case), or a name with wildcards and an optional
 * path (`example.com/galleries/`).
 *
 * @module
 */

import {
  addHostnameKey,
  compileRegex,
  hostnameTable,
  parseServerName,
  type Referers,
  sortWildcards,
  ValueError,
} from "../engine/mod.ts";
import type { Level } from "./compile_level.ts";
import type { SettingsContext } from "./compile_level_values.ts";
import type { Directive } from "./parser.ts";

/**
 * A level's referer check, or `undefined` when no level sets one
 * (ngx_http_referer_merge_conf): a level without `valid_referers` takes
 * its parent's whole; one with them has its own names, `none`, `blocked`
 * and `server_names`, and its parent's regexes (and the server's regex
 * names) unless it has its own.
 *
 * @param ctx Failures and warnings.
 * @param level The level.
 * @returns The compiled setting.
 */
export function referersSettings(
  ctx: Pick<SettingsContext, "fail">,
  level: Level,
): Referers | undefined {
  const lines = level.own("valid_referers");
  if (lines.length === 0) {
    return level.parent === null
      ? undefined
      : referersSettings(ctx, level.parent);
  }
  const keys = hostnameTable<string | null>();
  const out = {
    none: false,
    blocked: false,
    serverNameRegexes: [] as RegExp[],
    regexes: [] as RegExp[],
  };
  // ngx_http_add_referer
  const add = (d: Directive, name: string, uri: string | null) => {
    const added = addHostnameKey(keys, name, uri, true);
    if (added === "declined") {
      ctx.fail(d, `invalid hostname or wildcard "${name}"`);
    } else if (added === "busy") {
      ctx.fail(d, `conflicting parameter "${name}"`);
    }
  };
  let serverNamesAt: Directive | null = null;
  for (const d of lines) {
    for (const arg of d.args) {
      if (arg === "") ctx.fail(d, `invalid referer "${arg}"`);
      else if (arg === "none") out.none = true;
      else if (arg === "blocked") out.blocked = true;
      else if (arg === "server_names") serverNamesAt = d;
      else if (arg.startsWith("~")) {
        if (arg.length === 1) {
          ctx.fail(d, `empty regex in "${arg}"`);
          continue;
        }
        try {
          out.regexes.push(compileRegex(arg.slice(1), true));
        } catch (error) {
          if (!(error instanceof ValueError)) throw error;
          ctx.fail(d, error.message);
        }
      } else {
        const slash = arg.indexOf("/");
        // A path of its own, or none (NGX_HTTP_REFERER_NO_URI_PART).
        if (slash < 0) add(d, arg, null);
        else add(d, arg.slice(0, slash), arg.slice(slash));
      }
    }
  }
  // The server's names as the merge finds them: every one, `""` when the
  // server names none (ngx_http_core_merge_srv_conf).
  if (serverNamesAt !== null) {
    serverNames(ctx, serverNamesAt, level, out, add);
  }
  if (
    (out.none || out.blocked) && keys.exact.size === 0 &&
    keys.wildcards.leading.length === 0 && keys.wildcards.trailing.length === 0
  ) {
    ctx.fail(
      lines[0]!,
      'the "none" or "blocked" referers are specified in the "valid_referers" directive without any valid referer',
    );
  }
  sortWildcards(keys);
  const parent = out.regexes.length === 0 || out.serverNameRegexes.length === 0
    ? (level.parent === null ? undefined : referersSettings(ctx, level.parent))
    : undefined;
  return {
    none: out.none,
    blocked: out.blocked,
    exact: keys.exact,
    wildcards: keys.wildcards,
    serverNameRegexes: out.serverNameRegexes.length > 0
      ? out.serverNameRegexes
      : parent?.serverNameRegexes ?? [],
    regexes: out.regexes.length > 0 ? out.regexes : parent?.regexes ?? [],
  };
}

/** `server_names`: the server's names, its regex names matched apart. */
function serverNames(
  ctx: Pick<SettingsContext, "fail">,
  d: Directive,
  level: Level,
  out: { serverNameRegexes: RegExp[] },
  add: (d: Directive, name: string, uri: string | null) => void,
): void {
  const lines = level.get("server_name");
  if (lines.length === 0) add(d, "", null);
  for (const line of lines) {
    for (const name of line.args) {
      if (!name.startsWith("~")) {
        add(d, name, null);
        continue;
      }
      try {
        const parsed = parseServerName(name);
        if (parsed.kind === "regex") out.serverNameRegexes.push(parsed.regex);
      } catch (error) {
        if (!(error instanceof ValueError)) throw error;
        ctx.fail(line, error.message);
      }
    }
  }
}
