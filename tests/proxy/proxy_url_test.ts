import { deepStrictEqual } from "node:assert/strict";
import { parseProxyUrl, type ProxyUrl } from "../../src/proxy/proxy_url.ts";

Deno.test("parseProxyUrl() reads an evaluated proxy_pass as ngx_http_proxy_eval and ngx_parse_url", () => {
  const ok = (
    host: string,
    port: number,
    noPort: boolean,
    uri: string,
  ): ProxyUrl => ({
    ok: true,
    host,
    port,
    noPort,
    uri,
  });
  const fail = (message: string): ProxyUrl => ({ ok: false, message });
  const table: [string, ProxyUrl][] = [
    ["http://10.0.0.5:8080", ok("10.0.0.5", 8080, false, "")],
    ["HTTP://backend", ok("backend", 80, true, "")],
    ["http://backend/v1/x?y=1", ok("backend", 80, true, "/v1/x?y=1")],
    // A query right after the host becomes "/?…".
    ["http://10.0.0.5:8080?x=1", ok("10.0.0.5", 8080, false, "/?x=1")],
    ["http://[::1]:9000/a", ok("[::1]", 9000, false, "/a")],
    ["http://[::1]", ok("[::1]", 80, true, "")],
    ["http://a:8080/b:c", ok("a", 8080, false, "/b:c")],
    ["http://", fail('invalid URL prefix in "http://"')],
    ["https://10.0.0.5", fail('invalid URL prefix in "https://10.0.0.5"')],
    ["10.0.0.5:8080", fail('invalid URL prefix in "10.0.0.5:8080"')],
    ["http://a:0", fail('invalid port in upstream "a:0"')],
    ["http://a:65536", fail('invalid port in upstream "a:65536"')],
    ["http://a:b:80", fail('invalid port in upstream "a:b:80"')],
    ["http://a:/x", fail('invalid port in upstream "a:/x"')],
    ["http:///x", fail('no host in upstream "/x"')],
    ["http://[::1", fail('invalid host in upstream "[::1"')],
  ];
  for (const [url, expected] of table) {
    deepStrictEqual(parseProxyUrl(url), expected, url);
  }
});
