/**
 * The upstream: the group of servers with nginx's peer choice
 * (round-robin, `ip_hash`, `least_conn`, `hash KEY [consistent]`), each
 * server held from its choice until its exchange ends (`PeerHold`,
 * `UpstreamCall.onEnd`), and the walk from one server to the next, the
 * transport the proxy sends a call
 * through (an HTTP/1.1 client with pooled connections; a test's fake), the
 * typed failure with nginx's texts and its status, and the probe the
 * built-in page and `--check` use.
 *
 * @module
 */

export {
  UpstreamError,
  upstreamErrorFromOs,
  upstreamStatus,
  upstreamTimeout,
} from "./error.ts";
export type { UpstreamAction } from "./error.ts";
export type { UpstreamFailureKind } from "./error.ts";
export { createUpstreamGroup } from "./group.ts";
export { type ParsedAddress, parseUpstreamAddress } from "./address.ts";
export type { UpstreamGroup, UpstreamPeer } from "./group.ts";
export type { Balance, HashKey } from "./balance.ts";
export { probeHttp, UpstreamHealth } from "./health.ts";
export { NEVER_RELAYED, transferEncodingOf } from "./response_framing.ts";
export type { HealthReport } from "./health.ts";
export {
  NO_FAILURES,
  PeerHold,
  tryPeers,
  upstreamField,
  walkPeers,
} from "./next_upstream.ts";
export type {
  AttemptFailure,
  DroppedAnswer,
  PeerOutcome,
  PeerWalk,
} from "./next_upstream.ts";
export {
  DEFAULT_NEXT_UPSTREAM,
  nextUpstreamMask,
  readNextUpstream,
} from "./try_next.ts";
export type { NextUpstream, NextUpstreamWords } from "./try_next.ts";
export { isAvailable, ngxTime } from "./peer_choice.ts";
export type { TransportFactory, UpstreamTransport } from "./transport.ts";
export type {
  BodyReadTimer,
  UpstreamAddress,
  UpstreamCall,
  UpstreamReply,
  UpstreamServerSpec,
  UpstreamTimeouts,
} from "./types.ts";
export { PEER_HOST_VALUE } from "./request_head.ts";
export { BodyFile } from "./body_file.ts";
export { GATHER_PIECE, WriteGather } from "./write_gather.ts";
export { DEFAULT_HEAD_BUFFER, indexOfHeadEnd } from "./http1.ts";
export {
  InvalidResponseError,
  oddBytes,
  parseFieldLines,
} from "./field_line_parser.ts";
export type { ResponseHead } from "./http1.ts";
