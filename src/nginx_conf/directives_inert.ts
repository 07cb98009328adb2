/**
 * Directives that matter only beside one the gateway refuses: the uwsgi
 * and SCGI modules' settings (nothing reads them without their
 * `*_pass`, which the gateway refuses) and `proxy_ssl_*` (nothing reads them
 * without an `https://` `proxy_pass`, which the gateway refuses). nginx
 * accepts them anywhere its module tables allow, and so does the gateway,
 * with one warning each: a configuration that sets them and never uses them
 * behaves as one without them. Places and counts are nginx 1.22's
 * (`ngx_http_uwsgi_commands`, `ngx_http_scgi_commands`, `ngx_http_proxy_commands`).
 *
 * @module
 */

/** Settings both gateway-refused protocols share, `suffix args`. */
const SHARED = [
  "store 1-1",
  "store_access 1-3",
  "buffering flag",
  "request_buffering flag",
  "ignore_client_abort flag",
  "bind 1-2",
  "socket_keepalive flag",
  "connect_timeout 1-1",
  "send_timeout 1-1",
  "buffer_size 1-1",
  "pass_request_headers flag",
  "pass_request_body flag",
  "intercept_errors flag",
  "read_timeout 1-1",
  "buffers 2-2",
  "busy_buffers_size 1-1",
  "force_ranges flag",
  "limit_rate 1-1",
  "cache 1-1",
  "cache_key 1-1",
  "cache_bypass 1-n",
  "no_cache 1-n",
  "cache_valid 1-n",
  "cache_min_uses 1-1",
  "cache_max_range_offset 1-1",
  "cache_use_stale 1-n",
  "cache_methods 1-n",
  "cache_lock flag",
  "cache_lock_timeout 1-1",
  "cache_lock_age 1-1",
  "cache_revalidate flag",
  "temp_path 1-4",
  "max_temp_file_size 1-1",
  "temp_file_write_size 1-1",
  "next_upstream 1-n",
  "next_upstream_tries 1-1",
  "next_upstream_timeout 1-1",
  "param 2-3",
  "pass_header 1-1",
  "hide_header 1-1",
  "ignore_headers 1-n",
] as const;

/** Each protocol's own settings besides {@linkcode SHARED}. */
const OWN: Record<"uwsgi" | "scgi", readonly string[]> = {
  uwsgi: [
    "modifier1 1-1",
    "modifier2 1-1",
    // nginx 1.22 declares this one TAKE1, not a flag.
    "cache_background_update 1-1",
    "string 1-1",
    ...sslSettings(),
  ],
  scgi: ["cache_background_update flag"],
};

/** The `*_ssl_*` settings of an upstream protocol, `suffix args`. */
function sslSettings(): string[] {
  return [
    "ssl_session_reuse flag",
    "ssl_protocols 1-n",
    "ssl_ciphers 1-1",
    "ssl_name 1-1",
    "ssl_server_name flag",
    "ssl_verify flag",
    "ssl_verify_depth 1-1",
    "ssl_trusted_certificate 1-1",
    "ssl_crl 1-1",
    "ssl_certificate 1-1",
    "ssl_certificate_key 1-1",
    "ssl_password_file 1-1",
    "ssl_conf_command 2-2",
  ];
}

/**
 * The entries, in the form of the directive table
 * (`name contexts args disposition`, then the reason).
 */
export const INERT_TABLE: readonly (readonly [string, string])[] = [
  ...(["uwsgi", "scgi"] as const).flatMap((p) => {
    const only = `it matters only with ${p}_pass`;
    return [
      [
        `${p}_pass LI 1-1 emerg`,
        "the gateway forwards over HTTP and FastCGI only",
      ],
      [`${p}_cache_path H 2-n warn`, only],
      ...[...SHARED, ...OWN[p]].map((s) => {
        const [suffix, args] = s.split(" ");
        return [`${p}_${suffix} HSL ${args} warn`, only] as const;
      }),
    ] as const;
  }),
  ...sslSettings().map((s) => {
    const [suffix, args] = s.split(" ");
    return [
      `proxy_${suffix} HSL ${args} warn`,
      'it matters only with an "https://" proxy_pass, which the gateway refuses',
    ] as const;
  }),
];
