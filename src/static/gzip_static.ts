/**
 * `gzip_static` (`ngx_http_gzip_static_module`): the `.gz` beside a file,
 * served in its place before the static module looks at the file.
 *
 * @module
 */

import { gzipAccepted, isBuiltInError } from "../response/mod.ts";
import { statOrNull } from "./sync_fs.ts";
import { planFile, type StaticPlan } from "./file_plan.ts";
import { fileRequest } from "./file_request.ts";
import type { FileServe } from "./serve_file_options.ts";

/**
 * `gzip_static`: the `.gz` beside the file, for a client that takes gzip
 * (`on`) or for any (`always`), typed by the file's own extension; served
 * without ranges, as nginx. `null` declines to the file itself.
 *
 * @param ctx The static request; `vary` and `failure` are set on it.
 * @returns The plan for the `.gz`, or `null`.
 */
export function gzipStatic(ctx: FileServe): StaticPlan | null {
  const { o } = ctx;
  const on = o.conf.gzipStatic === "on";
  const ok = !on || gzipAccepted(o.vars, o.conf.gzipOk);
  if (on && !ok && o.gzipVary !== true) return null;
  const path = `${o.path}.gz`;
  const info = o.cache
    ? o.cache.statOptional(path, o.now ?? Date.now())
    : statOrNull(path);
  if (info === null) return null;
  if (on) ctx.vary = true;
  if (!ok || !info.isFile) return null;
  const plan = planFile(fileRequest(ctx, false), { path, info }, [[
    "content-encoding",
    "gzip",
  ]]);
  if (plan.kind === "again") return plan;
  if (plan.kind === "done" && isBuiltInError(plan.result.response)) {
    // The .gz could not be opened (or lies outside the folder): nginx logs
    // all but ENOENT and serves the file itself (gzip_static declines).
    const { response, failure } = plan.result;
    if (response.status !== 404 && failure !== undefined) {
      ctx.failure = failure;
    }
    return null;
  }
  return plan;
}
