/**
 * `proxy_pass` with variables in its host, side by side with nginx 1.22
 * (tests/testdata/nginx_conf/proxy_pass_host_variables): the URL is
 * evaluated per request (ngx_http_proxy_eval); an `upstream{}` name is that
 * group, an address is connected to directly, a name that is neither gets
 * 502 and `no resolver defined to resolve …`, a value without `http://` 500
 * and `invalid URL prefix in …`; a location whose only `proxy_pass` is in an
 * `if` that does not match serves its files.
 */
import { join } from "node:path";
import { assertSameAsNginx, buildAhead, TESTDATA } from "./_corpus/mod.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

// The gateway's station is built now, so its folders have settled when
// the test runs.
if (!ON_LINUX.ignore) buildAhead([join(TESTDATA, "proxy_pass_host_variables")]);

Deno.test(
  "proxy_pass with variables in the host reaches what nginx reaches",
  ON_LINUX,
  async () => {
    await assertSameAsNginx("proxy_pass_host_variables", [
      "POST /api/corpus?from=corpus: 200 → upstream 1: POST /api/corpus?from=corpus HTTP/1.x",
      "POST /named/corpus?from=corpus: 200 → upstream 2: POST /v1/named/corpus?from=corpus HTTP/1.x",
      "GET /port/corpus: 200 → upstream 2: GET /?from=port HTTP/1.x",
      "GET /nores/corpus: 502",
      "GET /noprefix/corpus: 500",
      "GET /ws/corpus: 404",
    ]);
  },
);
