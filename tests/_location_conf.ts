/**
 * `LocationConf` and `RequestVars` objects for tests, filled with nginx
 * 1.22's defaults (what a location gets when nothing sets a directive), so a
 * test states only the directives it is about.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import {
  compileValue,
  type LocationConf,
  type RequestVars,
  Variables,
} from "../src/engine/mod.ts";
import { DEFAULT_NEXT_UPSTREAM } from "../src/upstream/mod.ts";
import { NGINX_GZIP_OK } from "../src/response/mod.ts";
import { tokenize } from "../src/nginx_conf/lexer.ts";
import {
  NGINX_CHARSET_TYPES,
  NGINX_DEFAULT_TYPE,
  NGINX_DEFAULT_TYPES,
  typesFromDirectives,
} from "../src/static/mod.ts";

/** Resolves variable names as an nginx.conf without `map`s or `set`s. */
export const TEST_VARIABLES: Variables = new Variables(new Map(), new Set());

/**
 * A compiled value, as the compiler would make it.
 *
 * @param text The value as written.
 * @returns It compiled.
 */
export function value(text: string): ReturnType<typeof compileValue> {
  return compileValue(text, TEST_VARIABLES);
}

/** The stock `mime.types` of Debian's nginx 1.22, as the compiler reads it. */
export const STOCK_MIME_TYPES_PATH = fileURLToPath(
  new URL("./testdata/nginx_conf/mime.types", import.meta.url),
);

/**
 * The types of the stock `mime.types` (`include mime.types;`).
 *
 * @returns Extension → media type.
 */
export function stockMimeTypes(): Map<string, string> {
  const statements = tokenize(Deno.readTextFileSync(STOCK_MIME_TYPES_PATH));
  if (!Array.isArray(statements)) throw new Error(statements.message);
  const directives = statements
    .filter((s) => s.end === ";" && s.words.length > 0)
    .map((s) => ({ name: s.words[0]!, args: s.words.slice(1) }));
  return typesFromDirectives(directives).types;
}

/**
 * A location with nginx's defaults and the given settings.
 *
 * @param settings The directives the test sets.
 * @returns The merged location.
 */
export function locationConf(
  settings: Partial<LocationConf> = {},
): LocationConf {
  return {
    match: "prefix",
    name: "/",
    regex: null,
    place: null,
    locations: { exact: new Map(), prefixes: [], regexes: [] },
    internal: false,
    rewrite: null,
    root: value("/usr/share/nginx/html"),
    alias: null,
    index: [value("index.html")],
    tryFiles: null,
    logNotFound: true,
    types: NGINX_DEFAULT_TYPES,
    defaultType: NGINX_DEFAULT_TYPE,
    charset: null,
    charsetTypes: NGINX_CHARSET_TYPES,
    addHeaders: [],
    expires: { kind: "off" },
    etag: true,
    gzipStatic: "off",
    gzipVary: false,
    gzip: {
      enabled: false,
      level: 1,
      minLength: 20,
      types: new Set(["text/html"]),
    },
    gzipOk: NGINX_GZIP_OK,
    errorPages: new Map(),
    recursiveErrorPages: false,
    errorPageFallback: false,
    proxyPass: null,
    proxySetHeaders: [
      ["Host", value("$proxy_host")],
      ["Connection", value("close")],
    ],
    proxyHttpVersion: "1.0",
    proxyRawUri: false,
    proxyRedirect: [],
    proxyCookieDomain: [],
    proxyCookiePath: [],
    proxyHideHeaders: new Set(),
    proxyPassHeaders: new Set(),
    proxyTimeouts: { connectMs: 60_000, sendMs: 60_000, readMs: 60_000 },
    proxyBufferSize: 4096,
    proxyBuffering: true,
    proxyIgnoreHeaders: new Set(),
    proxyInterceptErrors: false,
    proxyNextUpstream: DEFAULT_NEXT_UPSTREAM,
    clientMaxBodySize: 1024 * 1024,
    defaultPage: false,
    accessRules: null,
    authBasic: null,
    satisfy: "all",
    limitReq: null,
    limitConn: null,
    accessLogs: [],
    // A file the logger did not open: the main log.
    errorLogs: [{ path: "logs/error.log", level: "error" }],
    ...settings,
  };
}

/** What of the connection {@linkcode requestVars} needs. */
export interface TestConnection {
  /** The local port (`$server_port`). */
  serverPort: number;
  /** The client's address. @default {"127.0.0.1"} */
  remoteAddr?: string;
  /** `$server_name`. @default {"localhost"} */
  serverName?: string;
}

/**
 * A request's variables: a GET of `/` on 127.0.0.1:0 from 127.0.0.1, for
 * `localhost` over plain HTTP/1.1, with `fields` in their place.
 *
 * @param fields The variables that differ.
 * @returns The variables.
 */
export function varsWith(fields: Partial<RequestVars>): RequestVars {
  return {
    method: "GET",
    requestUri: "/",
    uri: "/",
    args: "",
    headers: new Headers(),
    remoteAddr: "127.0.0.1",
    remotePort: 0,
    serverAddr: "127.0.0.1",
    serverPort: 0,
    serverName: "localhost",
    scheme: "http",
    protocol: "HTTP/1.1",
    host: "localhost",
    proxyHost: "",
    documentRoot: "",
    requestFilename: "",
    remoteUser: "",
    captures: [],
    named: {},
    vars: new Map(),
    ...fields,
  };
}

/**
 * The variables of a request as the request flow fills them: `$uri` is the
 * decoded path, `$host` the `Host` without port, lower case.
 *
 * @param req The request.
 * @param conn The connection.
 * @returns The variables.
 */
export function requestVars(req: Request, conn: TestConnection): RequestVars {
  const url = new URL(req.url);
  const query = url.search.slice(1);
  const hostField = req.headers.get("host");
  const serverName = conn.serverName ?? "localhost";
  return varsWith({
    method: req.method,
    requestUri: url.pathname + url.search,
    uri: decodeURIComponent(url.pathname),
    args: query,
    headers: req.headers,
    remoteAddr: conn.remoteAddr ?? "127.0.0.1",
    serverPort: conn.serverPort,
    serverName,
    host: hostField === null
      ? serverName
      : hostField.replace(/:\d+$/, "").toLowerCase(),
  });
}
