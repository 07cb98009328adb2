/**
 * `client_max_body_size` in the phases: checked where each location is
 * found (ngx_http_core_find_config_phase), before that location's rewrite
 * and access phases, never in a named location, and not again once the
 * body was refused (it is discarded).
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  type DeclaredBody,
  internalRedirect,
  type PhaseOutcome,
  type PhaseState,
  runPhases,
} from "../../src/engine/mod.ts";
import { compileText, describe, requestVars } from "./_conf.ts";

const CONF = compileText(`http {
  limit_req_zone $binary_remote_addr zone=r:1m rate=1r/m;
  limit_conn_zone $binary_remote_addr zone=c:1m;
  client_max_body_size 100;
  server {
    rewrite ^/srv$ /ret/ last;
    location /ret/ { client_max_body_size 10; return 200 x; }
    location /rw/ { client_max_body_size 10; rewrite ^ /big/ last; }
    location /big/ { client_max_body_size 1000; return 200 big; }
    location /tosmall/ { rewrite ^ /ret/ last; }
    location /if/ { client_max_body_size 10; if ($uri) { return 200 if; } }
    location /lr/ { client_max_body_size 10; limit_req zone=r; }
    location /lc/ { client_max_body_size 10; limit_conn c 1; }
    location /deny/ { client_max_body_size 10; deny all; }
    location /auth/ { client_max_body_size 10; auth_basic x; auth_basic_user_file u; }
    location /st/ { client_max_body_size 10; }
    location /px/ { client_max_body_size 10; proxy_pass http://127.0.0.1:8080; }
    location /in/ { internal; client_max_body_size 10; }
    location /free/ { client_max_body_size 0; return 200 free; }
    location @named { client_max_body_size 10; return 200 named; }
  }
}`);

/** The phases' first decision for a body, and its length afterwards. */
function run(
  target: string,
  contentLength: number | null,
  redirect?: string,
): [string, number | null] {
  const body: DeclaredBody = {
    contentLength,
    lengthDigits: contentLength === null ? null : `00${contentLength}`,
  };
  const state: PhaseState = {
    cycles: 0,
    internal: false,
    caseless: false,
    body,
  };
  const io = { family: "linux" as const, fileKind: () => null };
  const server = CONF.servers[0]!;
  const vars = requestVars(target, { method: "POST" });
  const outcome: PhaseOutcome = redirect === undefined
    ? runPhases(server, vars, { state, io })
    : internalRedirect(server, vars, redirect, { state, io });
  return [
    outcome.kind === "access"
      ? `access ${outcome.conf.name}`
      : describe(outcome),
    body.contentLength,
  ];
}

const REFUSED = "status 413 client intended to send too large body: 20 bytes";

Deno.test("runPhases() refuses a declared body past the found location's client_max_body_size before its rewrite and access phases", () => {
  const table: [string, number | null, [string, number | null]][] = [
    ["/ret/a", 20, [REFUSED, 0]],
    ["/ret/a", 10, ["return 200 x", 10]],
    // No length (chunked): the phases have nothing to check.
    ["/ret/a", null, ["return 200 x", null]],
    ["/rw/a", 20, [REFUSED, 0]],
    // The location a `rewrite … last` finds is checked in its turn.
    ["/tosmall/a", 20, [REFUSED, 0]],
    // A server-level rewrite runs before any location is found.
    ["/srv", 20, [REFUSED, 0]],
    ["/if/a", 20, [REFUSED, 0]],
    ["/lr/a", 20, [REFUSED, 0]],
    ["/lr/a", 5, ["access /lr/", 5]],
    ["/lc/a", 20, [REFUSED, 0]],
    ["/deny/a", 20, [REFUSED, 0]],
    ["/auth/a", 20, [REFUSED, 0]],
    ["/st/a", 20, [REFUSED, 0]],
    ["/px/a", 20, [REFUSED, 0]],
    // Before the proxied location's slash redirect, after `internal`.
    ["/px", 20, [REFUSED, 0]],
    ["/px", 5, ["301 /px/", 5]],
    ["/in/a", 20, ["status 404", 20]],
    ["/free/a", 1e9, ["return 200 free", 1e9]],
    // No location: the server's own limit.
    ["/none", 200, [
      "status 413 client intended to send too large body: 200 bytes",
      0,
    ]],
  ];
  for (const [target, length, expected] of table) {
    deepStrictEqual(run(target, length), expected, `${target} ${length}`);
  }
});

Deno.test("internalRedirect() checks the location it finds, not a named one nor a body refused before", () => {
  deepStrictEqual(run("/x", 20, "/ret/a"), [REFUSED, 0]);
  deepStrictEqual(run("/x", 20, "@named"), ["return 200 named", 20]);
  // A refused body is discarded: the redirect after it finds no length.
  deepStrictEqual(run("/x", 0, "/ret/a"), ["return 200 x", 0]);
});
