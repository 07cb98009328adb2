/**
 * The directives the gateway knows: where nginx allows each one, how many
 * arguments it takes, and what the gateway does with it. The places and
 * counts are nginx 1.22's (the `ngx_command_t` tables of the core, events,
 * http core, proxy, upstream, log, index, gzip, ssi and rewrite modules), so
 * `ngx_conf_handler`'s checks give nginx's verdict.
 *
 * @module
 */

import { INERT_TABLE } from "./directives_inert.ts";
import { FASTCGI_TABLE } from "./directives_fastcgi.ts";
import { TUNING_TABLE } from "./directives_tuning.ts";

/** A block kind, or `main` for the top of the file. */
export type Context =
  | "main"
  | "events"
  | "http"
  | "server"
  | "location"
  | "upstream"
  | "types"
  | "map"
  | "if";

/**
 * What the gateway does with a directive: `map` it onto a setting, accept it
 * with one `warn` (it cannot change what a client or the logs see), refuse it
 * (`emerg`: it would change behaviour the gateway does not reproduce), or
 * accept it only at its nginx `default` value (any other value is refused).
 */
export type Disposition = "map" | "warn" | "emerg" | "default";

/** One directive's entry. */
export interface DirectiveSpec {
  /** Where nginx allows it. */
  contexts: readonly Context[];
  /** Fewest arguments. */
  min: number;
  /** Most arguments (`Infinity` for 1MORE/2MORE). */
  max: number;
  /** `on`/`off` (nginx's `NGX_CONF_FLAG`). */
  flag: boolean;
  /** Takes a `{ … }` block. */
  block: boolean;
  /** What the gateway does with it. */
  disposition: Disposition;
  /** For `default`: the value nginx has when it is absent. */
  defaultValue?: string;
  /** Why it is warned about or refused, for the message. */
  why?: string;
}

const CTX: Record<string, Context> = {
  M: "main",
  E: "events",
  H: "http",
  S: "server",
  L: "location",
  U: "upstream",
  I: "if",
};

const PASS = "the gateway passes upstream bytes through as they are";
const PROCESS = "the gateway runs as one process with its own limits";
const TUNING = "it only tunes how nginx does its work";
const NOT_DONE = "the gateway does not reproduce it";
const TLS_SESSIONS =
  "the runtime (rustls) keeps its own TLS session resumption";
const ECDHE =
  "the runtime (rustls) negotiates ECDHE key exchange only, with its own curves";
const STAPLING =
  "the runtime (rustls) staples no OCSP response: browsers ask the CA themselves";
const CLIENT_CERTS =
  'it matters only with "ssl_verify_client", which the gateway refuses';
const HTTP2 = "the runtime sets its own HTTP/2 limits";

/**
 * The table: `name contexts args disposition [default]`, where contexts are
 * letters of {@linkcode CTX}, args is `min-max` (`n` = no limit), `flag`,
 * or `{min-max}` for a block.
 */
const TABLE: readonly (readonly [string, string?])[] = [
  ["daemon M flag warn", PROCESS],
  ["master_process M flag warn", PROCESS],
  ["user M 1-2 warn", PROCESS],
  ["worker_processes M 1-1 warn", PROCESS],
  ["worker_rlimit_nofile M 1-1 warn", PROCESS],
  ["worker_priority M 1-1 warn", PROCESS],
  ["timer_resolution M 1-1 warn", PROCESS],
  ["pid M 1-1 warn", "the gateway writes no pid file"],
  ["env M 1-1 warn", PROCESS],
  ["pcre_jit M flag warn", TUNING],
  ["error_log MHSL 1-n map"],
  ["events M {0-0} warn", PROCESS],
  ["worker_connections E 1-1 warn", PROCESS],
  ["use E 1-1 warn", PROCESS],
  ["multi_accept E flag warn", PROCESS],
  ["accept_mutex E flag warn", PROCESS],
  ["accept_mutex_delay E 1-1 warn", PROCESS],
  ["http M {0-0} map"],
  ["server H {0-0} map"],
  ["server U 1-n map"],
  ["upstream H {1-1} map"],
  ["keepalive U 1-1 map"],
  ["keepalive_timeout U 1-1 warn", TUNING],
  ["keepalive_requests U 1-1 warn", TUNING],
  // The balancing methods nginx 1.22 builds in; `random` chooses at
  // random, which no side by side can match.
  ["least_conn U 0-0 map"],
  [
    "random U 0-2 emerg",
    "the gateway balances by round-robin, ip_hash, least_conn or hash (use one of them)",
  ],
  ["ip_hash U 0-0 map"],
  ["hash U 1-2 map"],
  ["listen S 1-n map"],
  ["server_name S 1-n map"],
  ["location SL {1-2} map"],
  ["root HSLI 1-1 map"],
  ["alias L 1-1 map"],
  ["index HSL 1-n map"],
  ["try_files SL 2-n map"],
  ["error_page HSLI 2-n map"],
  ["internal L 0-0 map"],
  ["log_not_found HSL flag map"],
  ["types HSL {0-0} map"],
  ["default_type HSL 1-1 map"],
  ["access_log HSLI 1-n map"],
  ["log_format H 2-n map"],
  ["proxy_pass LI 1-1 map"],
  ["proxy_connect_timeout HSL 1-1 map"],
  ["proxy_send_timeout HSL 1-1 map"],
  ["proxy_read_timeout HSL 1-1 map"],
  ["client_max_body_size HSL 1-1 map"],
  ["proxy_http_version HSL 1-1 map"],
  ["proxy_set_header HSL 2-2 map"],
  ["proxy_redirect HSL 1-2 map"],
  // Deno.serve has no idle timeout for client connections: one stays open
  // until the client closes it (the README's "Slow and idle clients").
  [
    "keepalive_timeout HSL 1-2 warn",
    "the runtime keeps an idle client connection open until the client closes it",
  ],
  ["proxy_buffer_size HSL 1-1 map"],
  ["proxy_buffers HSL 2-2 warn", TUNING],
  ["proxy_busy_buffers_size HSL 1-1 warn", TUNING],
  ["proxy_buffering HSL flag map"],
  [
    "proxy_bind HSL 1-2 warn",
    "the runtime connects from the address the system picks, the loopback address itself for a back end on this machine",
  ],
  ["proxy_request_buffering HSL flag map"],
  ["proxy_temp_path HSL 1-4 warn", TUNING],
  ["client_body_temp_path HSL 1-4 map"],
  ["client_body_timeout HSL 1-1 map"],
  ["client_body_buffer_size HSL 1-1 map"],
  ["client_header_buffer_size HS 1-1 warn", TUNING],
  ["large_client_header_buffers HS 2-2 map"],
  ["proxy_intercept_errors HSL flag map"],
  ["proxy_next_upstream HSL 1-n map"],
  ["absolute_redirect HSL flag default", "on"],
  ["port_in_redirect HSL flag default", "on"],
  ["server_name_in_redirect HSL flag default", "off"],
  ["merge_slashes HS flag default", "on"],
  ["underscores_in_headers HS flag map"],
  ["ignore_invalid_headers HS flag map"],
  ["autoindex HSL flag map"],
  ["stub_status SL 0-1 map"],
  ["autoindex_format HSL 1-1 default", "html"],
  ["server_tokens HSL 1-1 warn", "the gateway names itself in its own pages"],
  ["sendfile HSLI flag warn", PASS],
  ["tcp_nopush HSL flag warn", TUNING],
  ["tcp_nodelay HSL flag warn", TUNING],
  ["open_file_cache HSL 1-2 warn", TUNING],
  ["server_names_hash_bucket_size H 1-1 warn", TUNING],
  ["server_names_hash_max_size H 1-1 warn", TUNING],
  ["types_hash_max_size HSL 1-1 warn", TUNING],
  ["types_hash_bucket_size HSL 1-1 warn", TUNING],
  [
    "resolver HSL 1-n warn",
    "the gateway resolves no names per request: a proxy_pass with variables in its host reaches upstream{} names and addresses only",
  ],
  ["gzip HSLI flag map"],
  ["gzip_vary HSL flag map"],
  ["gzip_proxied HSL 1-n map"],
  ["gzip_comp_level HSL 1-1 map"],
  ["gzip_buffers HSL 2-2 warn", TUNING],
  ["gzip_http_version HSL 1-1 map"],
  ["gzip_min_length HSL 1-1 map"],
  ["gzip_types HSL 1-n map"],
  ["gzip_disable HSL 1-n map"],
  ["rewrite SLI 2-3 map"],
  ["return SLI 1-2 map"],
  ["if SL {1-n} map"],
  ["set SLI 2-2 map"],
  ["break SLI 0-0 map"],
  ["add_header HSLI 2-3 map"],
  ["expires HSLI 1-2 map"],
  ["charset HSLI 1-1 map"],
  ["allow HSL 1-1 map"],
  ["deny HSL 1-1 map"],
  ["auth_basic HSL 1-1 map"],
  ["auth_basic_user_file HSL 1-1 map"],
  ["auth_request SL 1-1 emerg", NOT_DONE],
  // Mapped or warned about by value in compile_ssl.ts.
  ["ssl HS flag map"],
  ["ssl_certificate HS 1-1 map"],
  ["ssl_certificate_key HS 1-1 map"],
  ["ssl_protocols HS 1-n map"],
  ["ssl_ciphers HS 1-1 map"],
  ["ssl_prefer_server_ciphers HS flag map"],
  ["ssl_session_cache HS 1-2 warn", TLS_SESSIONS],
  ["ssl_session_timeout HS 1-1 warn", TLS_SESSIONS],
  ["ssl_session_tickets HS flag warn", TLS_SESSIONS],
  ["ssl_session_ticket_key HS 1-1 warn", TLS_SESSIONS],
  ["ssl_dhparam HS 1-1 warn", ECDHE],
  ["ssl_ecdh_curve HS 1-1 warn", ECDHE],
  ["ssl_stapling HS flag warn", STAPLING],
  ["ssl_stapling_verify HS flag warn", STAPLING],
  ["ssl_stapling_file HS 1-1 warn", STAPLING],
  ["ssl_stapling_responder HS 1-1 warn", STAPLING],
  ["ssl_trusted_certificate HS 1-1 warn", STAPLING],
  ["ssl_buffer_size HS 1-1 warn", TUNING],
  ["ssl_conf_command HS 2-2 warn", "the runtime's TLS stack is not OpenSSL"],
  ["ssl_early_data HS flag default", "off"],
  ["ssl_reject_handshake HS flag default", "off"],
  ["ssl_verify_client HS 1-1 default", "off"],
  ["ssl_verify_depth HS 1-1 warn", CLIENT_CERTS],
  ["ssl_client_certificate HS 1-1 warn", CLIENT_CERTS],
  ["ssl_crl HS 1-1 warn", CLIENT_CERTS],
  [
    "ssl_password_file HS 1-1 emerg",
    "the gateway reads keys without a pass phrase",
  ],
  ["http2_max_concurrent_streams HS 1-1 warn", HTTP2],
  ["http2_max_field_size HS 1-1 warn", HTTP2],
  ["http2_max_header_size HS 1-1 warn", HTTP2],
  ["http2_max_requests HS 1-1 warn", HTTP2],
  ["http2_idle_timeout HS 1-1 warn", HTTP2],
  ["http2_recv_timeout HS 1-1 warn", HTTP2],
  ["http2_recv_buffer_size H 1-1 warn", HTTP2],
  ["http2_body_preread_size HS 1-1 warn", HTTP2],
  ["http2_chunk_size HSL 1-1 warn", HTTP2],
  ["http2_push_preload HSL flag warn", HTTP2],
  ["http2_push HSL 1-1 warn", HTTP2],
  ["limit_except L {1-n} emerg", NOT_DONE],
  ["map H {2-2} map"],
  // The gateway's own, written by its built-in configuration.
  ["station_status H 1-1 map"],
  ["station_default_page HS flag map"],
  ["station_error_page_fallback HSL flag map"],
  ["station_proxy_raw_uri L flag map"],
  ["charset_types HSL 1-n map"],
  ["source_charset HSLI 1-1 emerg", "the gateway does not recode responses"],
  ["override_charset HSLI flag default", "off"],
  ["etag HSL flag map"],
  ["if_modified_since HSL 1-1 default", "exact"],
  ["gzip_static HSL 1-1 map"],
  ["proxy_hide_header HSL 1-1 map"],
  ["proxy_pass_header HSL 1-1 map"],
  ["proxy_ignore_headers HSL 1-n map"],
  ["proxy_cookie_path HSL 1-2 map"],
  ["proxy_cookie_domain HSL 1-2 map"],
  ["proxy_cache HSL 1-1 default", "off"],
  ["proxy_cache_path H 2-n emerg", "the gateway keeps no response cache"],
  ["proxy_cache_valid HSL 1-n emerg", "the gateway keeps no response cache"],
  ["proxy_cache_bypass HSL 1-n warn", "it matters only with proxy_cache"],
  ["proxy_no_cache HSL 1-n warn", "it matters only with proxy_cache"],
  ["proxy_pass_request_headers HSL flag default", "on"],
  ["proxy_pass_request_body HSL flag default", "on"],
  ["geo H {1-2} map"],
  ["proxy_next_upstream_tries HSL 1-1 map"],
  ["proxy_next_upstream_timeout HSL 1-1 map"],
  ["proxy_max_temp_file_size HSL 1-1 warn", TUNING],
  ["proxy_temp_file_write_size HSL 1-1 warn", TUNING],
  ["proxy_set_body HSL 1-1 emerg", NOT_DONE],
  ["recursive_error_pages HSL flag map"],
  ["rewrite_log HSLI flag warn", "rewrite decisions are not logged"],
  ["uninitialized_variable_warn HSLI flag warn", TUNING],
  [
    "chunked_transfer_encoding HSL flag warn",
    "the runtime chunks a body of unknown length for HTTP/1.1 clients",
  ],
  ["client_header_timeout HS 1-1 warn", TUNING],
  ["send_timeout HSL 1-1 warn", TUNING],
  ["reset_timedout_connection HSL flag warn", TUNING],
  ["lingering_close HSL 1-1 warn", TUNING],
  ["lingering_time HSL 1-1 warn", TUNING],
  ["lingering_timeout HSL 1-1 warn", TUNING],
  ["keepalive_requests HSL 1-1 warn", TUNING],
  ["open_file_cache_valid HSL 1-1 warn", TUNING],
  ["open_file_cache_min_uses HSL 1-1 warn", TUNING],
  ["open_file_cache_errors HSL flag warn", TUNING],
  ["output_buffers HSL 2-2 warn", TUNING],
  ["postpone_output HSL 1-1 warn", TUNING],
  ["sendfile_max_chunk HSL 1-1 warn", TUNING],
  ["aio HSL 1-1 warn", TUNING],
  ["directio HSL 1-1 warn", TUNING],
  ["client_body_in_file_only HSL 1-1 default", "off"],
  ["satisfy HSL 1-1 map"],
  ["limit_req_zone H 3-4 map"],
  ["limit_req HSL 1-3 map"],
  ["limit_req_log_level HSL 1-1 map"],
  ["limit_req_status HSL 1-1 map"],
  ["limit_req_dry_run HSL flag map"],
  ["limit_conn_log_level HSL 1-1 map"],
  ["limit_conn_status HSL 1-1 map"],
  ["limit_conn_zone H 2-2 map"],
  ["limit_conn HSL 2-2 map"],
  ["limit_conn_dry_run HSL flag map"],
  ["set_real_ip_from HSL 1-1 emerg", NOT_DONE],
  ["real_ip_header HSL 1-1 emerg", NOT_DONE],
  ["sub_filter HSL 2-2 emerg", NOT_DONE],
  ["ssi HSLI flag map"],
  ["ssi_types HSL 1-n map"],
  ["ssi_silent_errors HSL flag map"],
  ["ssi_last_modified HSL flag map"],
  ["ssi_value_length HSL 1-1 map"],
  ["ssi_min_file_chunk HSL 1-1 warn", TUNING],
  ["ssi_ignore_recycled_buffers HSL flag warn", TUNING],
  ["autoindex_exact_size HSL flag map"],
  ["autoindex_localtime HSL flag map"],
];

function parse(line: string, extra?: string): [string, DirectiveSpec] {
  const [name = "", ctx = "", args = "", disposition = "map"] = line.split(
    " ",
  );
  const block = args.startsWith("{");
  const range = args.replace(/[{}]/g, "");
  const [min = "1", max = "1"] = range.split("-");
  const spec: DirectiveSpec = {
    contexts: [...ctx].map((c) => CTX[c]!),
    min: range === "flag" ? 1 : Number(min),
    max: range === "flag" ? 1 : max === "n" ? Infinity : Number(max),
    flag: range === "flag",
    block,
    disposition: disposition as Disposition,
  };
  if (disposition === "default") spec.defaultValue = extra!;
  else if (extra !== undefined) spec.why = extra;
  return [name, spec];
}

/** Every known directive, by name (a name may have one entry per context). */
export const DIRECTIVES: ReadonlyMap<string, readonly DirectiveSpec[]> =
  (() => {
    const map = new Map<string, DirectiveSpec[]>();
    for (
      const [line, extra] of [
        ...TABLE,
        ...INERT_TABLE,
        ...FASTCGI_TABLE,
        ...TUNING_TABLE,
      ]
    ) {
      const [name, spec] = parse(line, extra);
      map.set(name, [...(map.get(name) ?? []), spec]);
    }
    return map;
  })();
