/**
 * The reply a response head makes, by the body's framing
 * (`response_framing.ts`): none, the whole body already read with the head,
 * or a stream (`body.ts`); and whether the connection goes back to the pool
 * at its end.
 *
 * @module
 */

import {
  type BodySource,
  endOfAnswer,
  MORE_THAN_LENGTH,
  streamBody,
} from "./body.ts";
import type { ClientWatch, Connection } from "./connection.ts";
import type { ResponseHead } from "./http1.ts";
import { keepsAlive, type ResponseFraming } from "./response_framing.ts";
import type { UpstreamCall, UpstreamReply } from "./types.ts";

/**
 * The reply for a head that is not an upgrade: its body by its framing.
 *
 * @param c The connection the head came on.
 * @param answer `call`: the request; `watch`: the client's; `head`: the
 * head; `framing`: its body's; `rest`: the bytes read after the head.
 * @param source What a streamed body reads through.
 * @returns The reply.
 */
export function replyWithBody(
  c: Connection,
  { call, watch, head, framing, rest }: {
    call: UpstreamCall;
    watch: ClientWatch;
    head: ResponseHead;
    framing: ResponseFraming;
    rest: Uint8Array;
  },
  source: BodySource,
): UpstreamReply {
  // A 1xx here is refused (`relay`), what follows it unread: its
  // connection is not kept (nginx: `u->keepalive = 0` for a 101).
  const reusable = keepsAlive(head) && framing.kind !== "close" &&
    call.keepalive !== false && !c.abandoned && head.status >= 200;
  if (framing.kind === "none") {
    // A bodiless answer (HEAD, 1xx, 204, 304): whatever came after its
    // head is not part of it. A 1xx here is no interim answer (a 101 to a
    // request without Upgrade, a 099): nginx 1.22 relays it with what
    // follows as its body, the gateway refuses it with one line of its
    // own (`relay`), and no line about that body.
    endOfAnswer(c, {
      extra: rest,
      reusable,
      call,
      warning: call.method === "HEAD" || head.status < 200
        ? null
        : MORE_THAN_LENGTH,
      tryIndex: call.tryIndex,
    }, source.release);
    return { head, body: null, length: null };
  }
  if (framing.kind === "length" && rest.length >= framing.length) {
    // The whole body arrived with the head: no stream needed.
    endOfAnswer(c, {
      extra: rest.subarray(framing.length),
      reusable,
      call,
      warning: MORE_THAN_LENGTH,
      tryIndex: call.tryIndex,
    }, source.release);
    return {
      head,
      body: rest.slice(0, framing.length),
      length: framing.length,
    };
  }
  return {
    head,
    body: streamBody(
      c,
      { call, watch, framing, rest, reusable },
      source,
    ),
    length: framing.kind === "length" ? framing.length : null,
  };
}
