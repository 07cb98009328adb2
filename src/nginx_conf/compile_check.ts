/**
 * The first check of every directive the engine reads: the directive
 * table's verdict (implemented, warned and ignored, refused, or accepted
 * only at its default) and the few directives whose arguments decide it.
 * A refusal is collected, not thrown, so one `--check` names them all.
 *
 * @module
 */

import { pathProblem } from "../config/mod.ts";
import type { CompileContext } from "./compile_context.ts";
import { nextUpstreamVerdict } from "./compile_next_upstream.ts";
import type { Directive } from "./parser.ts";
import { proxyBindVerdict } from "./proxy_bind.ts";
import { tuningProblem } from "./directives_tuning.ts";

/** Directives the engine implements: the table's `map` ones are handled here. */
const HANDLED_HERE = new Set([
  "http",
  "server",
  "location",
  "upstream",
  "map",
  "geo",
  "split_clients",
]);

/**
 * The directives of a block the engine reads: those the compiler handles
 * itself, and those whose table's verdict lets them through.
 *
 * @param block The block's directives.
 * @param ctx Where refusals and warnings go.
 * @returns The directives kept, in their order.
 */
export function acceptedDirectives(
  block: readonly Directive[],
  ctx: Pick<CompileContext, "fail" | "warn">,
): Directive[] {
  return block.filter((d) =>
    HANDLED_HERE.has(d.name) || checkDirective(d, ctx)
  );
}

/**
 * The table's verdict for a directive.
 *
 * @param d The directive.
 * @param ctx Where refusals and warnings go.
 * @returns `false` when it is refused or only warned about.
 */
export function checkDirective(
  d: Directive,
  ctx: Pick<CompileContext, "fail" | "warn">,
): boolean {
  const spec = d.spec;
  if (d.name === "keepalive_timeout" && /^0+[a-z]*$/i.test(d.args[0]!)) {
    ctx.fail(
      d,
      '"keepalive_timeout 0" is not supported: the gateway keeps client connections open',
    );
    return false;
  }
  if (d.name === "root" || d.name === "alias") {
    const own = ownPathVariable(d.args[0]!);
    if (own !== null) {
      ctx.fail(
        d,
        `the $${own} variable cannot be used in the "${d.name}" directive`,
      );
      return false;
    }
  }
  if (
    (d.name === "root" || d.name === "alias") && !d.args[0]!.includes("$")
  ) {
    const problem = pathProblem(d.args[0]!);
    if (problem !== null) {
      ctx.fail(d, `"${d.name} ${d.args[0]}" is not supported: ${problem}`);
      return false;
    }
  }
  if (d.name === "stub_status") {
    // Deno.serve shows no connection table (README, stub-status).
    ctx.warn(
      d,
      `"stub_status": active connections are those with a request being answered; idle keep-alive connections are not seen (Waiting 0)`,
    );
  }
  const words = nextUpstreamVerdict(d);
  if (words !== null) {
    for (const warning of words.warnings) ctx.warn(d, warning);
    if (words.error !== null) {
      ctx.fail(d, words.error);
      return false;
    }
  }
  if (d.name === "proxy_bind") {
    const verdict = proxyBindVerdict(d.args);
    if (verdict === "default") return false;
    if (verdict !== "warn") {
      ctx.fail(
        d,
        `"${d.name} ${d.args.join(" ")}" is not supported: ${verdict.refused}`,
      );
      return false;
    }
  }
  if (d.name === "index" && !indexAccepted(d, ctx)) return false;
  const problem = tuningProblem(d);
  if (problem !== null) {
    ctx.fail(d, problem);
    return false;
  }
  if (spec === undefined || spec.disposition === "map") return true;
  if (spec.disposition === "warn") {
    ctx.warn(d, `"${d.name}" is ignored: ${spec.why}`);
  } else if (spec.disposition === "emerg") {
    ctx.fail(d, `"${d.name}" is not supported: ${spec.why}`);
  } else if (d.args.join(" ").toLowerCase() !== spec.defaultValue) {
    ctx.fail(
      d,
      `"${d.name} ${
        d.args.join(" ")
      }" is not supported: the gateway behaves as "${d.name} ${spec.defaultValue}"`,
    );
  }
  return false;
}

/**
 * `index`'s own checks (ngx_http_index_set_index), in its order: an
 * absolute name before the last is warned about (the index module
 * redirects to it untested, so no later name is ever tried), an empty one
 * refused, in words that name the first argument whichever is empty.
 */
function indexAccepted(
  d: Directive,
  ctx: Pick<CompileContext, "fail" | "warn">,
): boolean {
  for (let i = 0; i < d.args.length; i++) {
    const name = d.args[i]!;
    if (name.startsWith("/") && i !== d.args.length - 1) {
      ctx.warn(
        d,
        'only the last index in "index" directive should be absolute',
      );
    }
    if (name === "") {
      ctx.fail(d, `index "${d.args[0]}" in "index" directive is invalid`);
      return false;
    }
  }
  return true;
}

/**
 * `$document_root` or `$realpath_root` in a `root` or `alias`: each is read
 * from that very directive, so nginx refuses them at load
 * (ngx_http_core_root). nginx looks for the names in lower case alone; a
 * name in other letters reads the same variable, which nginx evaluates
 * until it meets itself (`cycle while evaluating variable`, then a path of
 * the text repeated); the gateway refuses those too.
 */
function ownPathVariable(path: string): string | null {
  const lower = path.toLowerCase();
  for (const name of ["document_root", "realpath_root"]) {
    if (lower.includes(`$${name}`) || lower.includes(`\${${name}}`)) {
      return name;
    }
  }
  return null;
}
