/**
 * `proxy_cookie_domain` and `proxy_cookie_path`
 * (`ngx_http_proxy_cookie_domain`, `ngx_http_proxy_cookie_path`): the
 * nearest level's pairs in order, `off` for none.
 *
 * @module
 */

import {
  compileRegex,
  type CookieRewrite,
  ValueError,
  type VariableScope,
} from "../engine/mod.ts";
import type { Level } from "./compile_level.ts";
import { value } from "./compile_level_values.ts";
import type { Directive } from "./parser.ts";

/** What compiling the pairs needs of the compiler. */
export interface CookieContext {
  /** Variable names. */
  scope: VariableScope;
  /** Refuses a directive: the message is collected with its place. */
  fail(d: Directive, message: string): void;
}

/**
 * The pairs of one of the two directives. A domain's leading dot is left
 * out of its text pattern and replacement (nginx keeps the cookie's own
 * dot); a domain regex is always caseless, a path regex with `~*`.
 *
 * @param ctx Names and refusals.
 * @param level The level.
 * @param name `proxy_cookie_domain` or `proxy_cookie_path`.
 * @returns The pairs.
 */
export function cookieRewrites(
  ctx: CookieContext,
  level: Level,
  name: "proxy_cookie_domain" | "proxy_cookie_path",
): CookieRewrite[] {
  const list = level.get(name);
  const domain = name === "proxy_cookie_domain";
  const out: CookieRewrite[] = [];
  for (const d of list) {
    if (d.args.length === 1) {
      if (d.args[0] !== "off") {
        ctx.fail(d, `invalid parameter "${d.args[0]}"`);
      } else if (list.length > 1) {
        ctx.fail(d, `"${name}" directive is duplicate`);
      }
      continue;
    }
    const [from = "", to = ""] = d.args;
    try {
      if (from.startsWith("~")) {
        const caseless = domain || from.startsWith("~*");
        const source = from.slice(!domain && from.startsWith("~*") ? 2 : 1);
        out.push({
          kind: "regex",
          regex: compileRegex(source, caseless),
          to: value(ctx, d, to),
        });
      } else {
        const strip = (text: string) =>
          domain && text.startsWith(".") ? text.slice(1) : text;
        out.push({
          kind: "text",
          from: value(ctx, d, strip(from)),
          to: value(ctx, d, strip(to)),
        });
      }
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      ctx.fail(d, error.message);
    }
  }
  return out;
}
