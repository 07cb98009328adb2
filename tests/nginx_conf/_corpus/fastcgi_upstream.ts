/**
 * The corpus harness's FastCGI upstream, for a placeholder a file passes
 * to with `fastcgi_pass`: the test responder (`_fastcgi_responder.ts`)
 * answering every request with one plain text, each request recorded as
 * the recording HTTP upstream records one (`upstream.ts`): a request line
 * made of its method and URI parameters, its parameters as the fields (the
 * client's port left out: it differs per connection), its body.
 *
 * @module
 */

import { startFastcgiResponder } from "../../_fastcgi_responder.ts";
import type { Received, RecordingUpstream } from "./upstream.ts";

/**
 * Which `{{UPSTREAM_n}}` placeholders a case passes to with `fastcgi_pass`.
 *
 * @param text Every file of the case.
 * @returns The placeholders' numbers (1 for `{{UPSTREAM}}`).
 */
export function fastcgiPlaceholders(text: string): Set<number> {
  const out = new Set<number>();
  for (
    const m of text.matchAll(
      /fastcgi_pass\s+\{\{UPSTREAM(?:_(\d+))?\}\}/g,
    )
  ) {
    out.add(m[1] ? Number(m[1]) : 1);
  }
  return out;
}

/**
 * Starts a recording FastCGI upstream.
 *
 * @param upstream Its placeholder's number.
 * @param seen Where each request is recorded.
 * @returns Its port and its disposal.
 */
export function startRecordingFastcgi(
  upstream: number,
  seen: Received[],
): RecordingUpstream {
  const responder = startFastcgiResponder({
    plain: "fastcgi answer\n",
    onSeen: (request) => {
      const param = (name: string) =>
        request.params.find(([n]) => n === name)?.[1] ?? "";
      seen.push({
        upstream,
        requestLine: `FastCGI ${param("REQUEST_METHOD")} ${
          param("REQUEST_URI")
        } role=${request.role} flags=${request.flags}`,
        fields: request.params.filter(([n]) => n !== "REMOTE_PORT"),
        framing: `stdin ${request.body.length}`,
        body: request.body,
      });
    },
  });
  return {
    port: responder.port,
    seen,
    [Symbol.asyncDispose]: () => responder[Symbol.asyncDispose](),
  };
}
