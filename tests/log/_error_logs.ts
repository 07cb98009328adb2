/**
 * An nginx.conf whose main level, two servers (one port, chosen by name) and
 * a location each have their own `error_log`, the requests that make a line
 * in each, and the lines each file holds: shared by the gateway's own test
 * and the side-by-side one with nginx 1.22.
 */
import { join } from "node:path";
import { maskErrorLine, rawRequest } from "../_utils.ts";

/**
 * The configuration: relative paths start at the prefix (`root html` is a
 * folder that does not exist there, so every file is an `open()` line).
 *
 * @param port The port both servers listen on.
 * @param extraHttp More `http` lines (nginx's temp folders).
 */
export function errorLogsConf(port: number, extraHttp = ""): string {
  return `error_log logs/main.log notice;
events {}
http {
  access_log off;
${extraHttp}
  server {
    listen 127.0.0.1:${port};
    error_log logs/a.log info;
    root html;
  }
  server {
    listen 127.0.0.1:${port};
    server_name b.test;
    error_log logs/b.log info;
    root html;
    location /loc/ {
      error_log logs/loc.log;
      error_log logs/loc-info.log info;
    }
    location /deny/ { deny all; }
    location /redir/ { try_files /none /loc/redirected; }
    location /shared/ { error_log logs/a.log; }
  }
}
`;
}

/** The requests, each on its own connection. */
export const ERROR_LOG_REQUESTS: readonly string[] = [
  // A file missing in each level.
  "GET /missing HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n",
  "GET /missing HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
  "GET /loc/missing HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
  // A location without its own: the server's.
  "GET /deny/x HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
  // An internal redirect: the line is the location redirected to's.
  "GET /redir/x HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
  // Another level naming the same file.
  "GET /shared/x HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
  // Before a server is known: the default server's (the first).
  "GET /%00 HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n",
  "GET /x HTTP/1.1\r\nConnection: close\r\n\r\n",
];

/** The log files, by name. */
export const ERROR_LOG_FILES = [
  "main.log",
  "a.log",
  "b.log",
  "loc.log",
  "loc-info.log",
] as const;

/** Sends every request, one after the other. */
export async function sendErrorLogRequests(port: number): Promise<void> {
  for (const request of ERROR_LOG_REQUESTS) await rawRequest(port, request);
}

/**
 * The lines about a request in each file, masked (time, pid, `*N`, the
 * prefix): start-up lines differ by design and are left out.
 */
export function requestLines(
  prefix: string,
): Record<typeof ERROR_LOG_FILES[number], string[]> {
  const read = (name: string) => {
    try {
      return Deno.readTextFileSync(join(prefix, "logs", name)).split("\n")
        .filter((l) => l.includes(", client: "))
        .map((l) => maskErrorLine(l).replaceAll(prefix, "PREFIX"));
    } catch {
      return [];
    }
  };
  return Object.fromEntries(
    ERROR_LOG_FILES.map((name) => [name, read(name)]),
  ) as Record<typeof ERROR_LOG_FILES[number], string[]>;
}

const ENOENT = "(2: No such file or directory)";

/** What each file holds after {@linkcode sendErrorLogRequests}. */
export const EXPECTED_LINES: Record<typeof ERROR_LOG_FILES[number], string[]> =
  {
    "main.log": [],
    "a.log": [
      `TIME [error] PID#TID: *N open() "PREFIX/html/missing" failed ${ENOENT}, client: 127.0.0.1, server: , request: "GET /missing HTTP/1.1", host: "a.test"`,
      `TIME [error] PID#TID: *N open() "PREFIX/html/shared/x" failed ${ENOENT}, client: 127.0.0.1, server: b.test, request: "GET /shared/x HTTP/1.1", host: "b.test"`,
      `TIME [info] PID#TID: *N client sent invalid request while reading client request line, client: 127.0.0.1, server: , request: "GET /%00 HTTP/1.1"`,
      `TIME [info] PID#TID: *N client sent HTTP/1.1 request without "Host" header while reading client request headers, client: 127.0.0.1, server: , request: "GET /x HTTP/1.1"`,
    ],
    "b.log": [
      `TIME [error] PID#TID: *N open() "PREFIX/html/missing" failed ${ENOENT}, client: 127.0.0.1, server: b.test, request: "GET /missing HTTP/1.1", host: "b.test"`,
      `TIME [error] PID#TID: *N access forbidden by rule, client: 127.0.0.1, server: b.test, request: "GET /deny/x HTTP/1.1", host: "b.test"`,
    ],
    "loc.log": [
      `TIME [error] PID#TID: *N open() "PREFIX/html/loc/missing" failed ${ENOENT}, client: 127.0.0.1, server: b.test, request: "GET /loc/missing HTTP/1.1", host: "b.test"`,
      `TIME [error] PID#TID: *N open() "PREFIX/html/loc/redirected" failed ${ENOENT}, client: 127.0.0.1, server: b.test, request: "GET /redir/x HTTP/1.1", host: "b.test"`,
    ],
    "loc-info.log": [
      `TIME [error] PID#TID: *N open() "PREFIX/html/loc/missing" failed ${ENOENT}, client: 127.0.0.1, server: b.test, request: "GET /loc/missing HTTP/1.1", host: "b.test"`,
      `TIME [error] PID#TID: *N open() "PREFIX/html/loc/redirected" failed ${ENOENT}, client: 127.0.0.1, server: b.test, request: "GET /redir/x HTTP/1.1", host: "b.test"`,
    ],
  };
