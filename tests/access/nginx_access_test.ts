/**
 * allow/deny, auth_basic and satisfy beside nginx 1.22: the same requests to
 * nginx and to a server on loopback that runs the access phase of
 * src/access/, compared by status, `WWW-Authenticate` and masked error
 * lines.
 */

import { deepStrictEqual } from "node:assert/strict";
import {
  AccessList,
  type AccessRule,
  parseAccessRule,
  PasswordChecker,
  runAccessPhase,
} from "../../src/access/mod.ts";
import {
  compileValue,
  type RequestVars,
  Variables,
} from "../../src/engine/mod.ts";
import { createLogger } from "../../src/log/mod.ts";
import { startNginx } from "../_nginx.ts";
import { maskErrorLine, rawRequest } from "../_utils.ts";
import { varsWith } from "../_location_conf.ts";

/** One location, written once for both. */
interface Spec {
  path: string;
  rules?: string[];
  satisfy?: "all" | "any";
  realm?: string;
  userFile?: string;
  /** Directives nginx gets that are not access ones (a nested location). */
  extra?: string;
}

const USERS = [
  "# station users",
  "plain:{PLAIN}pw-plain",
  "sha:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
  "ssha:{SSHA}rXVtWiPAY6/w8MuTLKIjpBjj2mtzYWx0MTIzNA==",
  "apr1:$apr1$abcdefgh$FBwExRW4dCc8aL.OvjpIE1",
  "md5:$1$saltsalt$qjXMvbEw8oaL.CzflDtaK/",
  "bcrypt:$2y$04$0123456789ABCDEFGHIJKusaXA5lIsB08VDGhlRdyrotVUs6YHnzK",
  "sha512:$6$saltstring$adDbXsJjcDlq2662QPgd.tkSOVmnG9Tt3oXl4HR60SusC3AGjirnDenVZp3DGwLwqy6iYKCzannhaX9DR72nN1",
  "sha256:$5$rounds=1200$0123456789abcdef$C/RQ97uDqiSxQap06P3TekAvv5B86drtxcuEYwHzg52",
  "crlf:{PLAIN}pw-crlf\r",
  "malformed line",
  "",
].join("\n");

function nginxLocation(s: Spec, dir: string): string {
  const lines = [
    ...(s.rules ?? []).map((r) => `${r};`),
    ...(s.satisfy ? [`satisfy ${s.satisfy};`] : []),
    ...(s.realm !== undefined ? [`auth_basic "${s.realm}";`] : []),
    ...(s.userFile !== undefined
      ? [`auth_basic_user_file ${dir}/${s.userFile};`]
      : []),
    `try_files /none =204;`,
    s.extra ?? "",
  ];
  return `location ${s.path} { ${lines.join(" ")} }`;
}

const SPECS: Spec[] = [
  { path: "/deny/", rules: ["deny all"] },
  { path: "/allow/", rules: ["allow 127.0.0.1", "deny all"] },
  { path: "/other/", rules: ["allow 10.0.0.0/8", "deny all"] },
  { path: "/nomatch/", rules: ["deny 10.0.0.0/8"] },
  {
    path: "/auth/",
    realm: "Station",
    userFile: "users",
    extra: `location /auth/off/ { auth_basic off; try_files /none =204; }`,
  },
  { path: "/missing/", realm: "Station", userFile: "none" },
  { path: "/realm/", realm: "Zone $http_x_zone", userFile: "users" },
  { path: "/utf8/", realm: "Zone \u00e9\u6771", userFile: "users" },
  {
    path: "/any/",
    rules: ["deny all"],
    satisfy: "any",
    realm: "Station",
    userFile: "users",
  },
  {
    path: "/anyallow/",
    rules: ["allow all"],
    satisfy: "any",
    realm: "Station",
    userFile: "users",
  },
  {
    path: "/anymissing/",
    rules: ["deny all"],
    satisfy: "any",
    realm: "Station",
    userFile: "none",
  },
  {
    path: "/all/",
    rules: ["allow all"],
    satisfy: "all",
    realm: "Station",
    userFile: "users",
  },
];

function basic(user: string, password: string): string {
  return `Basic ${btoa(`${user}:${password}`)}`;
}

// [path, Authorization or null, extra header]
const REQUESTS: [string, string | null, string?][] = [
  ["/deny/", null],
  ["/allow/", null],
  ["/other/", null],
  ["/nomatch/", null],
  ["/auth/", null],
  ["/auth/", "Bearer x"],
  ["/auth/", "Basic !!"],
  ["/auth/", basic("nobody", "x")],
  ["/auth/", basic("plain", "pw-plain")],
  ["/auth/", basic("plain", "wrong")],
  ["/auth/", basic("sha", "password")],
  ["/auth/", basic("sha", "wrong")],
  ["/auth/", basic("ssha", "password")],
  ["/auth/", basic("apr1", "password")],
  ["/auth/", basic("apr1", "wrong")],
  ["/auth/", basic("md5", "password")],
  ["/auth/", basic("bcrypt", "password")],
  ["/auth/", basic("bcrypt", "wrong")],
  ["/auth/", basic("sha512", "password")],
  ["/auth/", basic("sha512", "wrong")],
  ["/auth/", basic("sha256", "a".repeat(70))],
  ["/auth/", basic("crlf", "pw-crlf")],
  ["/auth/", basic("malformed line", "x")],
  ["/auth/", basic("# station users", "x")],
  ["/auth/off/", null],
  ["/missing/", basic("plain", "pw-plain")],
  ["/missing/", null],
  ["/realm/", null, "X-Zone: east"],
  ["/utf8/", null],
  ["/any/", null],
  ["/any/", basic("plain", "pw-plain")],
  ["/any/", basic("plain", "wrong")],
  ["/anyallow/", null],
  ["/anymissing/", basic("plain", "pw-plain")],
  ["/all/", null],
  ["/all/", basic("plain", "pw-plain")],
];

function rule(text: string): AccessRule {
  const [directive, arg] = text.split(" ") as ["allow" | "deny", string];
  const r = parseAccessRule(directive, arg);
  if (!r.ok) throw new Error(r.error);
  return r.rule;
}

function vars(req: Request, remoteAddr: string): RequestVars {
  const url = new URL(req.url);
  return varsWith({
    method: req.method,
    requestUri: url.pathname,
    uri: url.pathname,
    headers: req.headers,
    remoteAddr,
    host: "station",
  });
}

/** Finds the spec of a path, the longest prefix first. */
function specOf(path: string): Spec {
  if (path.startsWith("/auth/off/")) return { path: "/auth/off/" };
  return SPECS.find((s) => path.startsWith(s.path))!;
}

Deno.test("allow/deny, auth_basic and satisfy answer and log as nginx 1.22", async () => {
  const dir = await Deno.makeTempDir({ prefix: "access-compat-" });
  await Deno.writeTextFile(`${dir}/users`, USERS);
  await using nginx = await startNginx({
    servers: ["127.0.0.1:9"],
    serverLines: SPECS.map((s) => nginxLocation(s, dir)),
  });
  const errorLines: string[] = [];
  const logger = createLogger({
    errorLog: { write: (l: string) => errorLines.push(l) },
    accessLog: null,
    level: "info",
  });
  const scope = new Variables(new Map(), new Set());
  const checker = new PasswordChecker();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req, info) => {
      const remoteAddr = (info.remoteAddr as Deno.NetAddr).hostname;
      const path = new URL(req.url).pathname;
      const s = specOf(path);
      const decision = await runAccessPhase(
        {
          rules: s.rules ? new AccessList(s.rules.map(rule)) : null,
          satisfy: s.satisfy ?? "all",
          authBasic: s.realm !== undefined && s.userFile !== undefined
            ? {
              realm: compileValue(s.realm, scope),
              userFile: compileValue(`${dir}/${s.userFile}`, scope),
              confPrefix: dir,
            }
            : null,
        },
        {
          vars: vars(req, remoteAddr),
          authorization: req.headers.get("authorization"),
          remoteAddr,
          signal: req.signal,
        },
        checker,
      );
      for (const line of decision.lines) {
        logger.error({
          ...line,
          connection: 1,
          client: remoteAddr,
          server: "localhost",
          request: `${req.method} ${path} HTTP/1.1`,
          host: "station",
        });
      }
      return new Response(null, {
        status: decision.status === 0 ? 204 : decision.status,
        headers: decision.headers,
      });
    },
  );
  try {
    for (const [path, authorization, extra] of REQUESTS) {
      const head = `GET ${path} HTTP/1.1\r\nHost: station\r\n${
        authorization === null ? "" : `Authorization: ${authorization}\r\n`
      }${extra ? `${extra}\r\n` : ""}Connection: close\r\n\r\n`;
      const seen = [];
      for (const port of [nginx.port, server.addr.port]) {
        const before = port === nginx.port
          ? nginx.errorLines().length
          : errorLines.length;
        const response = await rawRequest(port, head);
        const status = response.match(/^HTTP\/1\.1 (\d+)/)?.[1];
        const challenge = response.match(/\r\nWWW-Authenticate: ([^\r]*)/i)
          ?.[1] ?? null;
        const lines = (port === nginx.port ? nginx.errorLines() : errorLines)
          .slice(before).map(maskErrorLine)
          .map((l) => l.replaceAll(dir, "DIR"))
          .filter((l) =>
            !l.includes("client closed") && !l.includes("keepalive")
          );
        seen.push({ status, challenge, lines });
      }
      deepStrictEqual(seen[1], seen[0], `${path} ${authorization}`);
    }
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
