/**
 * `proxy_pass` with variables in its URI part, side by side with nginx 1.22
 * (tests/testdata/nginx_conf/proxy_pass_variables): a regex location's
 * capture, `$request_uri`, a URI with `$uri` and `$args` in its query, and
 * an `upstream{}` name followed by variables. The evaluated URI goes
 * upstream as it is (no location prefix replaced, no query added), as
 * `ngx_http_proxy_eval` and `ngx_http_proxy_create_request` send it.
 */
import { join } from "node:path";
import { assertSameAsNginx, buildAhead, TESTDATA } from "./_corpus/mod.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

// The gateway's station is built now, so its folders have settled when
// the test runs.
if (!ON_LINUX.ignore) buildAhead([join(TESTDATA, "proxy_pass_variables")]);

Deno.test(
  "proxy_pass with variables after the host sends what nginx sends",
  ON_LINUX,
  async () => {
    await assertSameAsNginx("proxy_pass_variables", [
      // The client's query is not added to an evaluated URI.
      "POST /v3/api-docs/corpus?from=corpus: 200 → upstream 1: POST /v3/api-docs/corpus HTTP/1.x",
      "POST /raw/corpus?from=corpus: 200 → upstream 1: POST /raw/corpus?from=corpus HTTP/1.x",
      "POST /echo/corpus?from=corpus: 200 → upstream 1: POST /echo?u=/echo/corpus&from=corpus HTTP/1.x",
      "GET /named/corpus: 200 → upstream 1: GET /named HTTP/1.x",
      "POST /named/corpus?from=corpus: 200 → upstream 1: POST /named?from=corpus HTTP/1.x",
    ]);
  },
);
