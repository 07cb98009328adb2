/**
 * nginx's idiom for a literal `$` in a path (`geo $d { default "$"; }`,
 * then `${d}`): a `root` or an `access_log` file whose only variables are
 * such a geo's is a constant when the configuration is compiled (checked
 * and opened at start, nothing read per request); a geo a request can
 * change (more entries, a `set`, a named capture) stays a variable.
 */
import { deepStrictEqual } from "node:assert/strict";
import { compileText, refusals, requestVars } from "../engine/_conf.ts";

const DOLLAR = 'geo $d { default "$"; }';

/** [the http level's text, the root's constant, the access log's file] */
const CASES: [string, string | null, string | null][] = [
  [
    `${DOLLAR} server { listen 127.0.0.1:1; root "/srv/c\${d}/app"; }`,
    "/srv/c$/app",
    "/n/logs/access.log",
  ],
  [
    `${DOLLAR} access_log "/var/log/a\${d}\${d}.log";
     server { listen 127.0.0.1:1; root "\${d}"; }`,
    "/n/$",
    "/var/log/a$$.log",
  ],
  // A geo with a network: its value depends on the client.
  [
    `geo $d { default "$"; 10.0.0.0/8 x; }
     server { listen 127.0.0.1:1; root "/srv/c\${d}"; }`,
    null,
    "/n/logs/access.log",
  ],
  // `set` changes the variable for a request (nginx: a geo's is changeable).
  [
    `${DOLLAR} server { listen 127.0.0.1:1; root "/srv/c\${d}";
       location /x/ { set $d y; } }`,
    null,
    "/n/logs/access.log",
  ],
  // So does a regex's named capture.
  [
    `${DOLLAR} server { listen 127.0.0.1:1; root "/srv/c\${d}";
       location ~ ^/(?<d>x)/ { } }`,
    null,
    "/n/logs/access.log",
  ],
];

Deno.test("a root or access_log written with a geo's lone default is that text, fixed at start", () => {
  for (const [http, root, log] of CASES) {
    const conf = compileText(`http { ${http} }`);
    const server = conf.servers[0]!;
    deepStrictEqual(
      [server.conf.root.constant, conf.accessLog.path],
      [root, log],
      http,
    );
    // Either way, a request for / (no `set`, no capture) reads `$`.
    deepStrictEqual(
      server.conf.root.evaluate(requestVars("/")),
      root ?? "/srv/c$",
      http,
    );
  }
});

Deno.test("an access_log file whose variables a request can change is still refused", () => {
  deepStrictEqual(
    refusals(`http { geo $d { default "$"; 10.0.0.0/8 x; }
      access_log "/var/log/a\${d}.log";
      server { listen 127.0.0.1:1; } }`).map((e) => e.replace(/ in .*$/, "")),
    [
      '"access_log /var/log/a${d}.log" is not supported: the gateway opens its log files at start',
    ],
  );
});
