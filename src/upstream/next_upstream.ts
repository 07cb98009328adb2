/**
 * Walking the group's servers for one request, as nginx's
 * `ngx_http_upstream_next` does under the location's `proxy_next_upstream`
 * (or `fastcgi_next_upstream`): each failed attempt returned as data with
 * the server it tried, the next server only when {@linkcode shouldTryNext}
 * allows it, an answer whose status the location names dropped while
 * tries remain (`ngx_http_upstream_test_next`). Shared by plain requests
 * (`proxy.ts`) and WebSocket handshakes (`websocket_proxy.ts`).
 *
 * @module
 */

import { UpstreamError } from "./error.ts";
import type { UpstreamGroup, UpstreamPeer } from "./group.ts";
import {
  DEFAULT_NEXT_UPSTREAM,
  droppedIsFailure,
  dropsAnswer,
  NEXT_ANY_STATUS,
  type NextUpstream,
  shouldTryNext,
} from "./try_next.ts";

/** One failed attempt, for the request's error log. */
export interface AttemptFailure {
  /** What failed, with its class (`kind`) and phase (`action`). */
  error: UpstreamError;
  /** The `upstream:` field: the server tried and the path. */
  upstream: string;
  /** That failure made the server unavailable (nginx's `max_fails`). */
  disabled: boolean;
}

/** No failed attempt: shared, so a request that succeeds at once makes no list. */
export const NO_FAILURES: readonly AttemptFailure[] = Object.freeze([]);

const NONE_TRIED: ReadonlySet<UpstreamPeer> = new Set();

/**
 * The `upstream:` field of an error line: the server tried and the path.
 *
 * @param peer The server.
 * @param upstreamPath The path and query sent.
 * @returns e.g. `http://127.0.0.1:8080/loginms`.
 */
export function upstreamField(
  peer: UpstreamPeer,
  upstreamPath: string,
): string {
  return `http://${peer.spec.address.peer}${upstreamPath}`;
}

/**
 * The outcome of walking the group's servers for one request, with the
 * failed attempts before it, in order.
 */
export type PeerOutcome<T> =
  & { failures: readonly AttemptFailure[] }
  & (
    | { kind: "ok"; value: T; peer: UpstreamPeer }
    | { kind: "failed"; error: UpstreamError }
    | { kind: "no-live" }
    | {
      /** A bug (not an {@linkcode UpstreamError}): no next server is tried. */
      kind: "defect";
      error: unknown;
    }
  );

/**
 * One request's walk over a group's servers, as {@linkcode walkPeers}
 * takes it: one object, whose methods the walk calls (no closure per
 * request).
 */
export interface PeerWalk<R, T> {
  /** The request's method, for {@linkcode shouldTryNext}. */
  readonly method: string;
  /** The location's `*_next_upstream` settings, made at config load. */
  readonly next: NextUpstream;
  /** The path sent, for the `upstream:` field of each failure. */
  readonly upstreamPath: string;
  /** The body is a stream, which cannot be sent again once reading began. */
  readonly streamedBody: boolean;
  /** The client's address, which an `ip_hash` group chooses by. */
  readonly client?: string | undefined;
  /** The evaluated key a `hash` group chooses by. */
  readonly key?: string | undefined;
  /**
   * Told about each failed attempt as it fails, so its line is written
   * then, with its own time, as nginx writes it, and is not lost if the
   * process stops while a later server is tried.
   */
  onFailure(failure: AttemptFailure): void;
  /** One exchange with one server; the walk holds that server from now on. */
  attempt(peer: UpstreamPeer): Promise<R>;
  /**
   * Frees the server of the current attempt ({@linkcode
   * UpstreamGroup.release}) once, however often called: the walk calls it
   * when an attempt fails, the exchange's end (`UpstreamCall.onEnd`, a
   * tunnel's close) when it succeeded.
   */
  onEnd(): void;
  /**
   * Turns the exchange's result into the outcome's value; an
   * {@linkcode UpstreamError} it throws is that server's failure.
   * Synchronous, so a request costs no async layer of its own here.
   */
  accept(result: R, peer: UpstreamPeer): T;
  /**
   * The status of an answer, read only where the location names an
   * `http_*` condition.
   */
  statusOf(result: R): number;
  /**
   * Drops an answer the walk moves past: its connection is closed (as
   * `ngx_http_upstream_next` closes it) and the server freed, at once.
   * Told the status, for `$upstream_status`, and whether the server was
   * taken out (nginx's `upstream server temporarily disabled`).
   */
  drop(result: R, dropped: DroppedAnswer): void;
}

/** An answer the walk moved past (`ngx_http_upstream_test_next`). */
export interface DroppedAnswer {
  /** Its status. */
  status: number;
  /** The `upstream:` field: the server tried and the path. */
  upstream: string;
  /** That answer made the server unavailable (nginx's `max_fails`). */
  disabled: boolean;
}

/**
 * Tries the group's servers for one request as nginx does: the next server
 * after a failure only when {@linkcode shouldTryNext} allows it, each failure
 * kept with the `upstream:` field of the server tried.
 *
 * @param group The servers.
 * @param options The request's method and path, and whether its body can be
 * sent again after reading began.
 * @param attempt One exchange with one server.
 * @param accept Turns the exchange's result into the outcome's value; an
 * {@linkcode UpstreamError} it throws is that server's failure. Synchronous,
 * so a request costs no async layer of its own here.
 * @returns The first success, the last failure once every server was
 * tried, "no live upstreams" when servers are left but none is available,
 * or the defect that ended the walk; each with the failed attempts.
 */
export function tryPeers<R, T>(
  group: UpstreamGroup,
  options: {
    method: string;
    upstreamPath: string;
    streamedBody: boolean;
    /** See {@linkcode PeerWalk.client}. */
    client?: string | undefined;
    /** See {@linkcode PeerWalk.key}. */
    key?: string | undefined;
    /** See {@linkcode PeerWalk.onFailure}. */
    onFailure: (failure: AttemptFailure) => void;
    /** See {@linkcode PeerWalk.next}. */
    next?: NextUpstream | undefined;
    /**
     * See {@linkcode PeerWalk.statusOf} and {@linkcode PeerWalk.drop}:
     * without them every answer is accepted, whatever its status.
     */
    answers?: Pick<PeerWalk<R, T>, "statusOf" | "drop">;
    /**
     * What holds the server tried; the caller frees a success's (made
     * here when absent: the transport's end frees it then).
     */
    hold?: PeerHold;
  },
  attempt: (peer: UpstreamPeer) => Promise<R>,
  accept: (result: R, peer: UpstreamPeer) => T,
): Promise<PeerOutcome<T>> {
  const hold = options.hold ?? new PeerHold(group);
  return walkPeers(group, {
    method: options.method,
    next: options.next ?? DEFAULT_NEXT_UPSTREAM,
    upstreamPath: options.upstreamPath,
    streamedBody: options.streamedBody,
    client: options.client,
    key: options.key,
    onFailure: options.onFailure,
    attempt: (peer) => {
      hold.hold(peer);
      return attempt(peer);
    },
    onEnd: hold.free,
    accept,
    statusOf: options.answers
      ? (result) => options.answers!.statusOf(result)
      : () => 0,
    drop: (result, dropped) => options.answers?.drop(result, dropped),
  });
}

/**
 * The server one exchange holds, freed once (nginx's `u->peer.free`): for
 * walks that are not one object of their own (a WebSocket handshake and
 * its tunnel).
 */
export class PeerHold {
  #group: UpstreamGroup;
  #peer: UpstreamPeer | null = null;
  #tryIndex = 0;

  /** @param group The group the servers are chosen from. */
  constructor(group: UpstreamGroup) {
    this.#group = group;
  }

  /**
   * Holds the server of a new attempt.
   *
   * @param peer The server.
   */
  hold(peer: UpstreamPeer): void {
    this.#peer = peer;
    this.#tryIndex++;
  }

  /** The attempt under way, for its call's `tryIndex`. */
  get tryIndex(): number {
    return this.#tryIndex;
  }

  /**
   * Frees the server held, once; a callback, bound. A transport's end of
   * an earlier attempt (its `tryIndex`) frees nothing.
   *
   * @param tryIndex The attempt that ended; the current one when absent.
   */
  readonly free = (tryIndex?: number): void => {
    const peer = this.#peer;
    if (peer === null) return;
    if (tryIndex !== undefined && tryIndex !== this.#tryIndex) return;
    this.#peer = null;
    this.#group.release(peer);
  };
}

/**
 * {@linkcode tryPeers} with the request's part as one object.
 *
 * @param group The servers.
 * @param walk The request: its method, path, body, hooks and exchange.
 * @returns As {@linkcode tryPeers}.
 */
export async function walkPeers<R, T>(
  group: UpstreamGroup,
  walk: PeerWalk<R, T>,
): Promise<PeerOutcome<T>> {
  // Made on the first failure: nearly every request succeeds at once.
  let tried: Set<UpstreamPeer> | null = null;
  let failures: AttemptFailure[] | null = null;
  let last: UpstreamError | null = null;
  const hashed = group.walks ? group.walkFor(walk) : null;
  const next = walk.next;
  // nginx's `u->peer.tries`, bounded by `*_next_upstream_tries`, and
  // `u->peer.start_time` for `*_next_upstream_timeout`.
  const tries = next.tries === 0
    ? group.tries
    : Math.min(group.tries, next.tries);
  const start = next.timeoutMs === 0 ? 0 : performance.now();
  while (true) {
    const choice = group.choose(tried ?? NONE_TRIED, hashed);
    // nginx logs "no live upstreams" (502) whenever its tries are not spent
    // but no server is left to try, even after a failed attempt
    // (`ngx_http_upstream_connect` on NGX_BUSY).
    if (
      choice.kind === "no-live" ||
      (choice.kind === "none-left" && last === null)
    ) {
      return { kind: "no-live", failures: failures ?? NO_FAILURES };
    }
    if (choice.kind === "none-left") {
      return { kind: "failed", error: last!, failures: failures! };
    }
    const peer = choice.peer;
    try {
      const result = await walk.attempt(peer);
      if ((next.mask & NEXT_ANY_STATUS) !== 0) {
        const status = walk.statusOf(result);
        const bit = dropsAnswer(status, walk.method, next.mask);
        // ngx_http_upstream_test_next: only while another try remains,
        // so the last server's answer is relayed as it came, and never
        // with a streamed body, which was sent once and is gone.
        if (
          bit !== 0 && (tried?.size ?? 0) + 1 < tries &&
          !walk.streamedBody && !late(start, next)
        ) {
          (tried ??= new Set()).add(peer);
          let disabled = false;
          if (droppedIsFailure(bit)) disabled = group.failed(peer);
          else group.succeeded(peer);
          walk.drop(result, {
            status,
            upstream: upstreamField(peer, walk.upstreamPath),
            disabled,
          });
          walk.onEnd();
          continue;
        }
      }
      const value = walk.accept(result, peer);
      group.succeeded(peer);
      return { kind: "ok", value, peer, failures: failures ?? NO_FAILURES };
    } catch (error) {
      walk.onEnd();
      if (!(error instanceof UpstreamError)) {
        return { kind: "defect", error, failures: failures ?? NO_FAILURES };
      }
      (tried ??= new Set()).add(peer);
      last = error;
      // A client that left ends the attempt without failing the server
      // (nginx frees the peer with state 0 in
      // `ngx_http_upstream_finalize_request`).
      let disabled = false;
      if (error.kind === "client-closed") group.succeeded(peer);
      else disabled = group.failed(peer);
      const failure = {
        error,
        upstream: upstreamField(peer, walk.upstreamPath),
        disabled,
      };
      (failures ??= []).push(failure);
      walk.onFailure(failure);
      // A streamed body cannot be sent again once reading it has begun.
      const bodyGone = walk.streamedBody &&
        error.action !== "connecting to upstream";
      if (
        !shouldTryNext(error, walk.method, next.mask) || bodyGone ||
        tried.size >= tries || late(start, next)
      ) {
        return { kind: "failed", error, failures };
      }
    }
  }
}

/** `*_next_upstream_timeout` has passed since the first try (0: no bound). */
function late(start: number, next: NextUpstream): boolean {
  return next.timeoutMs !== 0 && performance.now() - start >= next.timeoutMs;
}
