/**
 * Which variable names a configuration may use, as nginx 1.22 decides at
 * load: every name its build knows is accepted in `log_format`, in
 * `access_log … if=` and in every other directive that takes variables
 * (one resolution, the engine's table), and any other name is nginx's
 * `unknown "…" variable`. The lists are checked against nginx itself.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { refusals } from "../engine/_conf.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";

/** Every name nginx 1.22 (Debian's build) accepts; `_x` stands for any suffix. */
const KNOWN =
  `arg_x args binary_remote_addr body_bytes_sent bytes_sent connection
  connection_requests connection_time connections_active connections_reading
  connections_waiting connections_writing content_length content_type cookie_x
  date_gmt date_local document_root document_uri fastcgi_path_info
  fastcgi_script_name gzip_ratio host hostname http2 http_host https
  invalid_referer is_args limit_conn_status limit_rate limit_req_status msec
  nginx_version pid pipe proxy_add_x_forwarded_for proxy_host
  proxy_internal_body_length proxy_internal_chunked proxy_port
  proxy_protocol_addr proxy_protocol_port proxy_protocol_server_addr
  proxy_protocol_server_port query_string realip_remote_addr realip_remote_port
  realpath_root remote_addr remote_port remote_user request request_body
  request_body_file request_completion request_filename request_id
  request_length request_method request_time request_uri scheme secure_link
  secure_link_expires sent_http_x sent_trailer_x server_addr server_name
  server_port server_protocol slice_range ssl_alpn_protocol ssl_cipher
  ssl_ciphers ssl_client_cert ssl_client_escaped_cert ssl_client_fingerprint
  ssl_client_i_dn ssl_client_i_dn_legacy ssl_client_raw_cert ssl_client_s_dn
  ssl_client_s_dn_legacy ssl_client_serial ssl_client_v_end ssl_client_v_remain
  ssl_client_v_start ssl_client_verify ssl_curve ssl_curves ssl_early_data
  ssl_protocol ssl_server_name ssl_session_id ssl_session_reused status
  tcpinfo_rcv_space tcpinfo_rtt tcpinfo_rttvar tcpinfo_snd_cwnd time_iso8601
  time_local uid_got uid_reset uid_set upstream_addr upstream_bytes_received
  upstream_bytes_sent upstream_cache_status upstream_connect_time
  upstream_cookie_x upstream_header_time upstream_http_x
  upstream_response_length upstream_response_time upstream_status
  upstream_trailer_x uri
  URI Server_Name loggable setvar cap`.split(/\s+/);

/**
 * Names nginx 1.22 refuses: unknown ones, a capture number (only values
 * read `$1`), and variables of later versions or modules not loaded.
 */
const UNKNOWN = [
  "no_such_thing",
  "1",
  "bytes_received",
  "upstream_queue_time",
  "upstream_last_server_name",
  "proxy_protocol_tlv_x",
  "geoip_country_code",
  "memcached_key",
];

/**
 * A configuration that reads `$name` in a format, in `if=`, or both (what
 * nginx loads first, the format, is alone where it is refused: the
 * gateway reports every refusal, nginx its first).
 */
function conf(
  name: string,
  uses: "format" | "if" | "both",
  listen = "127.0.0.1:80",
): string {
  const format = uses === "if" ? "" : `log_format f '[$${name}]';`;
  const log = uses === "format"
    ? ""
    : `access_log logs/a.log ${uses === "if" ? "combined" : "f"} if=$${name};`;
  return `http {
  map $status $loggable { ~^[23] 0; default 1; }
  ${format}
  server {
    listen ${listen};
    ${log}
    location ~ ^/(?<cap>.+)$ { set $setvar 1; }
  }
}`;
}

Deno.test("log_format and if= accept every variable nginx 1.22 knows and refuse others with its message", async (t) => {
  for (const name of KNOWN) {
    await t.step(`$${name} is known`, () => {
      deepStrictEqual(refusals(conf(name, "both")), []);
    });
  }
  for (const name of UNKNOWN) {
    await t.step(`$${name} is unknown`, () => {
      const refused = (uses: "format" | "if") =>
        refusals(conf(name, uses)).map((e) => e.replace(/ in \/n\/.*$/, ""));
      deepStrictEqual(refused("format"), [`unknown "${name}" variable`]);
      // `$1` in a value is a capture (ngx_http_script_compile).
      deepStrictEqual(
        refused("if"),
        name === "1" ? [] : [`unknown "${name}" variable`],
      );
    });
  }
});

Deno.test("the names known and unknown are nginx 1.22's", async () => {
  await using p = await nginxPrefix("", { name: "var-names-", dirs: ["logs"] });
  const test = async (name: string): Promise<string> => {
    const file = join(p.prefix, "nginx.conf");
    await Deno.writeTextFile(
      file,
      `events {}\n${
        conf(name, name.includes("|") ? "both" : "format", "127.0.0.1:1")
      }`,
    );
    const text = await nginxTestOutput({ prefix: p.prefix, conf: file });
    return /unknown "[^"]*" variable/.exec(text)?.[0] ?? "";
  };
  // Every known name at once: one load.
  deepStrictEqual(await test(KNOWN.join("|$")), "");
  for (const name of UNKNOWN) {
    deepStrictEqual(await test(name), `unknown "${name}" variable`);
  }
});
