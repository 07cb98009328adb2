/**
 * `ngx_http_fastcgi_module`'s directives (nginx 1.22's
 * `ngx_http_fastcgi_commands`: places and argument counts) and what the
 * gateway does with each: the ones the FastCGI handler reads are mapped
 * (`compile_fastcgi.ts`), buffering and temporary files only tune how nginx
 * works, the cache and `fastcgi_store` are taken at their default only.
 *
 * @module
 */

const TUNING = "it only tunes how nginx does its work";
const CACHE = "it matters only with fastcgi_cache";
const NO_CACHE = "the gateway keeps no response cache";

/** The entries, in the form of the directive table. */
export const FASTCGI_TABLE: readonly (readonly [string, string?])[] = [
  ["fastcgi_pass LI 1-1 map"],
  ["fastcgi_param HSL 2-3 map"],
  ["fastcgi_index HSL 1-1 map"],
  ["fastcgi_split_path_info HSL 1-1 map"],
  ["fastcgi_intercept_errors HSL flag map"],
  ["fastcgi_connect_timeout HSL 1-1 map"],
  ["fastcgi_send_timeout HSL 1-1 map"],
  ["fastcgi_read_timeout HSL 1-1 map"],
  ["fastcgi_buffer_size HSL 1-1 map"],
  ["fastcgi_hide_header HSL 1-1 map"],
  ["fastcgi_pass_header HSL 1-1 map"],
  ["fastcgi_pass_request_headers HSL flag map"],
  ["fastcgi_pass_request_body HSL flag map"],
  ["fastcgi_keep_conn HSL flag default", "off"],
  ["fastcgi_buffering HSL flag warn", TUNING],
  ["fastcgi_request_buffering HSL flag warn", TUNING],
  ["fastcgi_buffers HSL 2-2 warn", TUNING],
  ["fastcgi_busy_buffers_size HSL 1-1 warn", TUNING],
  ["fastcgi_send_lowat HSL 1-1 warn", TUNING],
  ["fastcgi_socket_keepalive HSL flag warn", TUNING],
  ["fastcgi_temp_path HSL 1-4 warn", TUNING],
  ["fastcgi_max_temp_file_size HSL 1-1 warn", TUNING],
  ["fastcgi_temp_file_write_size HSL 1-1 warn", TUNING],
  ["fastcgi_next_upstream_tries HSL 1-1 map"],
  ["fastcgi_next_upstream_timeout HSL 1-1 map"],
  [
    "fastcgi_bind HSL 1-2 warn",
    "the runtime connects from the address the system picks, the loopback address itself for a back end on this machine",
  ],
  ["fastcgi_next_upstream HSL 1-n map"],
  ["fastcgi_ignore_client_abort HSL flag default", "off"],
  ["fastcgi_force_ranges HSL flag default", "off"],
  ["fastcgi_limit_rate HSL 1-1 default", "0"],
  ["fastcgi_store HSL 1-1 default", "off"],
  ["fastcgi_store_access HSL 1-3 warn", "it matters only with fastcgi_store"],
  ["fastcgi_catch_stderr HSL 1-1 emerg", "the gateway does not reproduce it"],
  ["fastcgi_ignore_headers HSL 1-n map"],
  ["fastcgi_cache HSL 1-1 default", "off"],
  ["fastcgi_cache_path H 2-n emerg", NO_CACHE],
  ["fastcgi_cache_valid HSL 1-n emerg", NO_CACHE],
  ["fastcgi_cache_key HSL 1-1 warn", CACHE],
  ["fastcgi_cache_bypass HSL 1-n warn", CACHE],
  ["fastcgi_no_cache HSL 1-n warn", CACHE],
  ["fastcgi_cache_min_uses HSL 1-1 warn", CACHE],
  ["fastcgi_cache_max_range_offset HSL 1-1 warn", CACHE],
  ["fastcgi_cache_use_stale HSL 1-n warn", CACHE],
  ["fastcgi_cache_methods HSL 1-n warn", CACHE],
  ["fastcgi_cache_lock HSL flag warn", CACHE],
  ["fastcgi_cache_lock_timeout HSL 1-1 warn", CACHE],
  ["fastcgi_cache_lock_age HSL 1-1 warn", CACHE],
  ["fastcgi_cache_revalidate HSL flag warn", CACHE],
  ["fastcgi_cache_background_update HSL flag warn", CACHE],
];
