/**
 * Which upstream requests belong to a side's probes. A recording upstream
 * listens on a port the kernel chose, and anything on the machine may
 * connect to it: a server of another run still naming that port (the suites
 * of several runs share the host), or the gateway's `--check` probe that
 * timed out and arrived late. Counted by arrival, such a request slid every
 * later probe's record by one slot. Each side's requests carry a field with
 * a tag of the side's own, which nginx and the gateway pass on with the rest
 * of the client's fields (and a FastCGI upstream gets as `HTTP_X_CORPUS_RUN`,
 * RFC 3875 §4.1.18): a request with another tag, or the check's probe, is
 * not the side's. One without a tag (a file that does not pass the client's
 * fields on) still counts by arrival.
 *
 * @module
 */

import type { Probe } from "./client.ts";
import type { Received } from "./upstream.ts";

/** The field that carries a side's tag. */
export const RUN_FIELD = "X-Corpus-Run";

/** The field's name as a FastCGI parameter (RFC 3875 §4.1.18). */
const RUN_PARAM = "HTTP_X_CORPUS_RUN";

/** The `User-Agent` of the gateway's `--check` probe (`src/upstream`). */
const CHECK_AGENT = "station-gateway-probe";

/**
 * A new tag: 16 hex digits, the same length every time, so a request's
 * length (`$request_length`) does not change from run to run.
 *
 * @returns The tag.
 */
export function newRunTag(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A probe with the side's tag among its fields.
 *
 * @param probe The probe.
 * @param tag The side's tag.
 * @returns The probe to send.
 */
export function tagged(probe: Probe, tag: string): Probe {
  return { ...probe, fields: [...(probe.fields ?? []), [RUN_FIELD, tag]] };
}

function isRunField(name: string): boolean {
  return name.toLowerCase() === RUN_FIELD.toLowerCase() || name === RUN_PARAM;
}

function isAgent(name: string): boolean {
  return name.toLowerCase() === "user-agent" || name === "HTTP_USER_AGENT";
}

/**
 * The requests of a side's probes among those its upstreams received, the
 * tag's field taken out (so they compare as the requests the probes made).
 *
 * @param received What the side's upstreams recorded meanwhile.
 * @param tag The side's tag.
 * @returns The side's own requests, in order.
 * @example
 * ```ts
 * const own = ownRequests([
 *   { upstream: 1, requestLine: "GET /a HTTP/1.0", framing: "none", body: "",
 *     fields: [["X-Corpus-Run", "ours"]] },
 *   { upstream: 1, requestLine: "GET /b HTTP/1.0", framing: "none", body: "",
 *     fields: [["X-Corpus-Run", "theirs"]] },
 * ], "ours");
 * if (own.length !== 1 || own[0]!.fields.length !== 0) throw new Error();
 * ```
 */
export function ownRequests(received: Received[], tag: string): Received[] {
  const own: Received[] = [];
  for (const r of received) {
    const tags = r.fields.filter(([k]) => isRunField(k)).map(([, v]) => v);
    if (tags.some((v) => v !== tag)) continue;
    if (tags.length === 0) {
      const agent = r.fields.find(([k]) => isAgent(k))?.[1];
      if (agent === CHECK_AGENT) continue;
    }
    own.push({ ...r, fields: r.fields.filter(([k]) => !isRunField(k)) });
  }
  return own;
}
