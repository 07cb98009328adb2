/**
 * Serves the client app from its folder, as nginx (`try_files $uri $uri/
 * /index.html`) or Caddy's SPA pattern would: GET and HEAD, `index.html` for
 * folders and app routes, nginx's validators, single ranges, a cache policy,
 * precompressed sidecars, and never a byte from outside the root.
 *
 * Containment is by construction (`static/containment.ts`): every file is
 * opened first and proved inside the root on its handle, and only that
 * handle is read, so a name swapped for a link meanwhile serves nothing from
 * outside. Small files come from memory (`static/cache.ts`), under the
 * identity of the handle they were read from; nothing is held open between
 * requests, so a redeploy can replace files while the gateway runs.
 *
 * @module
 */

import { errorResponse } from "./error_pages.ts";
import { fileSlice } from "./file_slice.ts";
import { streamedResponse } from "./response_body.ts";
import { planStatic } from "./static_plan.ts";
import type { StaticOptions, StaticResult } from "./static_results.ts";

/** The longest a request waits for the folders on its path to settle. */
const MAX_SETTLE_WAIT_MS = 2500;

export type {
  StaticFailure,
  StaticOptions,
  StaticResult,
} from "./static_results.ts";

/**
 * Serves one static request.
 *
 * @param req The request.
 * @param route The decoded segments and whether the path ended in `/`.
 * @param options The root folder and policies.
 * @returns The response and, where nginx would log one, a failure line.
 */
export async function serveStatic(
  req: Request,
  route: { segments: string[]; directory: boolean; query?: string },
  options: StaticOptions,
): Promise<StaticResult> {
  let plan = planStatic(req, route, options);
  // A folder on the path changed in the last moments: containment waits
  // until it has been still (static/settled_proof.ts), a few times at most;
  // a folder that never settles is not proof, and the file is not sent.
  let waited = 0;
  while (plan.kind === "again") {
    if (waited >= MAX_SETTLE_WAIT_MS) {
      return { response: errorResponse(404, { head: req.method === "HEAD" }) };
    }
    const ms = plan.ms;
    await new Promise((resolve) => setTimeout(resolve, ms));
    waited += ms;
    plan = planStatic(req, route, options);
  }
  if (plan.kind === "done") return plan.result;
  if (plan.kind === "default-page") {
    return { response: await options.defaultPage!(req) };
  }
  const { file } = plan;
  const body = plan.start === 0 && plan.status === 200
    ? file.readable
    : fileSlice(file, plan.start, plan.length);
  return {
    response: streamedResponse(body, {
      status: plan.status,
      headers: plan.headers,
    }),
  };
}
