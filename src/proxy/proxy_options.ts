/**
 * The proxy's contract: what a location gives it to forward one request
 * ({@linkcode ProxyOptions}) and how forwarding ended ({@linkcode ProxyResult}).
 *
 * @module
 */

import type { BodyKeeper } from "./kept_body.ts";
import type { TempFiles } from "./temp_files.ts";
import type { RequestEvent } from "./outcome_log.ts";
import type { BodyDeadlines } from "./request_buffer.ts";
import type { UpstreamTries } from "../log/mod.ts";
import type {
  AttemptFailure,
  NextUpstream,
  UpstreamAction,
  UpstreamCall,
  UpstreamError,
  UpstreamGroup,
  UpstreamPeer,
  UpstreamReply,
} from "../upstream/mod.ts";

/** nginx's warning about an answer that stands, and the server that sent it. */
export interface AttemptWarning {
  /** nginx's words (`upstream sent more data than specified …`). */
  message: string;
  /** The `upstream:` field of its line. */
  upstream: string;
  /** The phase after `while`; `reading upstream` when absent. */
  action?: UpstreamAction;
}

/** Where and how to forward: the settings it reads, and the request's part. */
export interface ProxyOptions {
  /** The upstream servers. */
  group: UpstreamGroup;
  /** The path and query to request. */
  upstreamPath: string;
  /** nginx's `client_max_body_size` in bytes; 0 is unlimited. */
  clientMaxBodySize: number;
  /** The client's address (`$remote_addr`), which an `ip_hash` group chooses by. */
  client?: string;
  /** The evaluated key of a `hash` group (`undefined` for the others). */
  key?: string | undefined;
  /**
   * The declared `Content-Length`, from the gateway's one parse of it
   * (`parseContentLength`); `null` when there is none.
   */
  contentLength: number | null;
  /**
   * Told about every failed attempt as it fails, with the `upstream:`
   * field: those before the answer, and one after the response went out
   * (its body broke off).
   */
  onFailure: (failure: AttemptFailure) => void;
  /**
   * Told about bytes an upstream sent beyond its answer's framing: nginx's
   * warning, with the `upstream:` field; the answer stands (no failure).
   */
  onWarning: (warning: AttemptWarning) => void;
  /** The client's fields the location passes (`set_headers.ts`). */
  headers: readonly (readonly [string, string])[];
  /**
   * The location's `proxy_next_upstream` (or `fastcgi_next_upstream`)
   * settings, made at config load; nginx's default when absent.
   */
  next?: NextUpstream;
  /** A location's call settings: version, leading fields, timers, limits. */
  call: LocationCall;
  /**
   * The request asks for an upgrade that is not tunnelled (an SSI
   * include's, nginx's `r != r->main`): a `101` hands its connection over,
   * which is closed and its server freed before `toResponse` sees it.
   */
  upgrade?: boolean;
  /**
   * Turns a reply into the client's response (`location_reply.ts`); a
   * throw is that server's failure.
   */
  toResponse: (reply: UpstreamReply, peer: UpstreamPeer) => Response;
  /**
   * nginx's `proxy_request_buffering on`: read the whole body first
   * (`request_buffer.ts`); `null` or absent streams it as it arrives.
   */
  buffering?: RequestBuffering | null;
  /**
   * `client_body_timeout` of a body not read whole first (`buffering`
   * off): read ahead, or streamed upstream as it arrives. nginx's 60 s
   * with a timer of the read's own when absent.
   */
  bodyTimeout?: BodyTimeout | null;
  /**
   * A log line reads `$request_length`: every body is read through its
   * stream, which counts the bytes of one cut short (one call's read of a
   * small body does not), and the bytes a streamed body read are told to
   * the {@linkcode keeper}.
   */
  countsBody?: boolean;
  /**
   * nginx reads this location's body unbuffered
   * (ngx_http_proxy_handler's `request_body_no_buffering`:
   * `proxy_request_buffering off`, and a body without a length only to an
   * HTTP/1.1 server): one whose reading did not end leaves
   * `r->reading_body` set, so `$content_length` is not found for it
   * (ngx_http_variable_content_length), its bytes still counted.
   */
  readsUnbuffered?: boolean;
  /** Where each try is recorded for the access line; none when `null`. */
  tries?: UpstreamTries | null;
  /**
   * The request whose body is sent, when it is not the one forwarded: an
   * `error_page`'s or an `X-Accel-Redirect`'s copy of the client's request
   * (a GET without a body, as a `Request` must be) sends the client's
   * body, as nginx's redirected request keeps `r->request_body`: still
   * unread, or as an earlier location read it (kept when
   * {@linkcode keepBody} said so).
   */
  bodyOf?: Request | undefined;
  /**
   * Keep the body read for an internal redirect that may follow (the
   * location's `error_page`, an upstream's `X-Accel-Redirect`): a later
   * proxied target's forwarding sends it again.
   */
  keepBody?: boolean;
  /**
   * `false` when the target reads the body but sends none of it
   * (`fastcgi_pass_request_body off`): a body streamed to an earlier
   * upstream is then no loss. Absent: the body is sent.
   */
  sendsBody?: boolean;
  /**
   * Where the client's request keeps its body (its flow): written when
   * {@linkcode keepBody} says so, read by a redirected request's
   * forwarding.
   */
  keeper?: BodyKeeper | undefined;
  /**
   * Writes an error line with the request's context (a body's temporary
   * file, an `X-Accel-Redirect` nginx finds unsafe).
   */
  log?: (event: RequestEvent) => void;
}

/** `client_body_timeout`: the longest wait between two reads of a body. */
export interface BodyTimeout {
  /** `client_body_timeout` in milliseconds. */
  timeoutMs: number;
  /** The timers of the bodies being read, made once. */
  deadlines?: BodyDeadlines;
}

/** How a body is read whole before forwarding. */
export interface RequestBuffering extends BodyTimeout {
  /** `client_body_buffer_size`. */
  bufferSize: number;
  /** The `client_body_temp_path` folder. */
  temp: TempFiles;
}

/** The call settings a proxied location brings. */
export type LocationCall = Required<
  Pick<
    UpstreamCall,
    "version" | "leading" | "timeouts" | "headBufferSize" | "keepalive"
  >
>;

/**
 * How forwarding ended. Each failed attempt before it was handed to
 * `onFailure` as it failed (and logged then).
 */
export type ProxyResult =
  | { kind: "response"; response: Response }
  | {
    /** Every attempt failed. */
    kind: "failed";
    /** The last failure, which decides the status. */
    error: UpstreamError;
  }
  | {
    /** No server was available: nginx's "no live upstreams". */
    kind: "no-live";
  }
  | {
    /**
     * The client left while its body was being read, before any server was
     * chosen: nothing was forwarded.
     */
    kind: "client-left";
    /** The failure, as a client-closed error. */
    error: UpstreamError;
  }
  | {
    /**
     * The body's chunked framing is invalid: nginx's 400 `client sent
     * invalid chunked body`, nothing forwarded.
     */
    kind: "bad-body";
  }
  | {
    /** The body is over `client_max_body_size`: 413, nothing forwarded. */
    kind: "too-large";
    /** nginx's message, e.g. `client intended to send too large chunked body: 1048384+65524 bytes`. */
    message: string;
  }
  | {
    /** `client_body_timeout` passed while the body was read: 408. */
    kind: "body-timeout";
  }
  | {
    /** A temporary file for the body failed: nginx's 500 and `[crit]`. */
    kind: "temp-failed";
    /** nginx's message, e.g. `open() "/x/0000000001" failed`. */
    message: string;
    error: unknown;
  }
  | {
    /**
     * An internal redirect (an `error_page`, an upstream's
     * `X-Accel-Redirect`) after a location that streamed the body
     * (`proxy_request_buffering off`) to a target that sends it: it is
     * gone, so the redirected request is not sent (500 and an `[error]`
     * line) rather than sent without it.
     */
    kind: "body-not-kept";
  }
  | {
    /** A bug, to be thrown once the attempts before it are logged. */
    kind: "defect";
    error: unknown;
  };
