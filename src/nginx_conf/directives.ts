/**
 * The directives the gateway knows: where nginx allows each one, how many
 * arguments it takes, and what the gateway does with it. The places and
 * counts are nginx 1.22's (the `ngx_command_t` tables of the core, events,
 * http core, proxy, upstream, log, index, gzip and rewrite modules), so
 * `ngx_conf_handler`'s checks give nginx's verdict.
 *
 * @module
 */

/** A block kind, or `main` for the top of the file. */
export type Context =
  | "main"
  | "events"
  | "http"
  | "server"
  | "location"
  | "upstream"
  | "types"
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
  ["least_conn U 0-0 emerg", NOT_DONE],
  ["ip_hash U 0-0 emerg", NOT_DONE],
  ["hash U 1-2 emerg", NOT_DONE],
  ["listen S 1-n map"],
  ["server_name S 1-n map"],
  ["location SL {1-2} map"],
  ["root HSLI 1-1 map"],
  ["alias L 1-1 emerg", NOT_DONE],
  ["index HSL 1-n map"],
  ["try_files SL 2-n map"],
  ["error_page HSLI 2-n map"],
  ["internal L 0-0 map"],
  ["log_not_found HSL flag map"],
  ["types HSL {0-0} map"],
  ["default_type HSL 1-1 map"],
  ["access_log HSLI 1-n map"],
  ["log_format H 2-n warn", "it only matters where access_log names it"],
  ["proxy_pass LI 1-1 map"],
  ["proxy_connect_timeout HSL 1-1 map"],
  ["proxy_send_timeout HSL 1-1 map"],
  ["proxy_read_timeout HSL 1-1 map"],
  ["client_max_body_size HSL 1-1 map"],
  ["proxy_http_version HSL 1-1 map"],
  ["proxy_set_header HSL 2-2 map"],
  ["proxy_redirect HSL 1-2 map"],
  ["keepalive_timeout HSL 1-2 map"],
  ["proxy_buffer_size HSL 1-1 warn", TUNING],
  ["proxy_buffers HSL 2-2 warn", TUNING],
  ["proxy_busy_buffers_size HSL 1-1 warn", TUNING],
  ["proxy_buffering HSL flag warn", PASS],
  ["proxy_request_buffering HSL flag map"],
  ["proxy_temp_path HSL 1-4 warn", TUNING],
  ["client_body_temp_path HSL 1-4 map"],
  ["client_body_timeout HSL 1-1 map"],
  ["client_body_buffer_size HSL 1-1 map"],
  ["client_header_buffer_size HS 1-1 warn", TUNING],
  ["large_client_header_buffers HS 2-2 map"],
  ["proxy_intercept_errors HSL flag default", "off"],
  ["proxy_next_upstream HSL 1-n default", "error timeout"],
  ["absolute_redirect HSL flag default", "on"],
  ["port_in_redirect HSL flag default", "on"],
  ["server_name_in_redirect HSL flag default", "off"],
  ["merge_slashes HS flag default", "on"],
  ["underscores_in_headers HS flag default", "off"],
  ["ignore_invalid_headers HS flag default", "on"],
  ["autoindex HSL flag default", "off"],
  ["server_tokens HSL 1-1 warn", "the gateway names itself in its own pages"],
  ["sendfile HSLI flag warn", PASS],
  ["tcp_nopush HSL flag warn", TUNING],
  ["tcp_nodelay HSL flag warn", TUNING],
  ["open_file_cache HSL 1-2 warn", TUNING],
  ["server_names_hash_bucket_size H 1-1 warn", TUNING],
  ["server_names_hash_max_size H 1-1 warn", TUNING],
  ["types_hash_max_size HSL 1-1 warn", TUNING],
  ["types_hash_bucket_size HSL 1-1 warn", TUNING],
  ["resolver HSL 1-n warn", TUNING],
  ["gzip HSLI flag warn", PASS],
  ["gzip_vary HSL flag warn", PASS],
  ["gzip_proxied HSL 1-n warn", PASS],
  ["gzip_comp_level HSL 1-1 warn", PASS],
  ["gzip_buffers HSL 2-2 warn", PASS],
  ["gzip_http_version HSL 1-1 warn", PASS],
  ["gzip_min_length HSL 1-1 warn", PASS],
  ["gzip_types HSL 1-n warn", PASS],
  ["gzip_disable HSL 1-n warn", PASS],
  ["rewrite SLI 2-3 emerg", NOT_DONE],
  ["return SLI 1-2 emerg", NOT_DONE],
  ["if SL {1-n} emerg", NOT_DONE],
  ["set SLI 2-2 emerg", NOT_DONE],
  ["break SLI 0-0 emerg", NOT_DONE],
  ["add_header HSLI 2-3 emerg", NOT_DONE],
  ["expires HSLI 1-2 emerg", NOT_DONE],
  ["charset HSLI 1-1 emerg", NOT_DONE],
  ["allow HSL 1-1 emerg", NOT_DONE],
  ["deny HSL 1-1 emerg", NOT_DONE],
  ["auth_basic HSL 1-1 emerg", NOT_DONE],
  ["auth_basic_user_file HSL 1-1 emerg", NOT_DONE],
  ["auth_request SL 1-1 emerg", NOT_DONE],
  ["ssl_certificate HS 1-1 emerg", NOT_DONE],
  ["ssl_certificate_key HS 1-1 emerg", NOT_DONE],
  ["ssl_session_cache HS 1-2 emerg", NOT_DONE],
  ["ssl_session_timeout HS 1-1 emerg", NOT_DONE],
  ["ssl_ciphers HS 1-1 emerg", NOT_DONE],
  ["ssl_prefer_server_ciphers HS flag emerg", NOT_DONE],
  ["ssl_protocols HS 1-n emerg", NOT_DONE],
  ["limit_except L {1-n} emerg", NOT_DONE],
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
    for (const [line, extra] of TABLE) {
      const [name, spec] = parse(line, extra);
      map.set(name, [...(map.get(name) ?? []), spec]);
    }
    return map;
  })();
