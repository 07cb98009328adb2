/**
 * `proxy_next_upstream` beside a real nginx 1.22 on the same nginx.conf:
 * real servers that refuse, stall, close without answering, or answer
 * 502, 404 or 200, each location a group and words of its own. Compared:
 * which server answered (its body), the status, the error lines (masked)
 * and the access lines with `$upstream_addr` and `$upstream_status`.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  refusedPort,
  startRawUpstream,
  untilClosed,
  waitFor,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

/** Reads one request, its body included (so a close is no reset). */
async function readRequest(conn: Deno.Conn): Promise<string | null> {
  const buf = new Uint8Array(16 * 1024);
  let text = "";
  for (let i = 0; i < 100; i++) {
    const end = text.indexOf("\r\n\r\n");
    if (end !== -1) {
      const length = Number(/content-length: *(\d+)/i.exec(text)?.[1] ?? 0);
      if (text.length >= end + 4 + length) return text;
    }
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return null;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return null;
}

function answer(status: string, body: string): string {
  return `HTTP/1.1 ${status}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

/** Answers by the path's last part: `s502`, `s404`, `stall`, `close`. */
function badServer(name: string) {
  return startRawUpstream(async (conn) => {
    const request = await readRequest(conn);
    if (request === null) return;
    const path = request.split(" ")[1] ?? "";
    if (path.endsWith("/stall")) return await untilClosed(conn);
    if (path.endsWith("/close")) return;
    const status = path.endsWith("/s404") ? "404 Not Found" : "502 Bad Gateway";
    await writeText(conn, answer(status, name));
  });
}

function goodServer() {
  return startRawUpstream(async (conn) => {
    if (await readRequest(conn) !== null) {
      await writeText(conn, answer("200 OK", "good"));
    }
  });
}

type Server = "refused" | "refused2" | "bad" | "bad2" | "good";

/**
 * [location and group, the group's servers, the location's lines, server
 * parameters]: a group per location, so each request meets its servers
 * in the order written.
 */
const CASES: [string, Server[], string, string][] = [
  ["default", ["bad", "good"], "", " max_fails=0"],
  ["errstall", ["bad", "good"], "proxy_next_upstream error;", " max_fails=0"],
  ["errclose", ["bad", "good"], "proxy_next_upstream error;", " max_fails=0"],
  ["off", ["refused", "good"], "proxy_next_upstream off;", " max_fails=0"],
  ["idem", ["bad", "good"], "proxy_next_upstream error;", " max_fails=0"],
  [
    "nonidem",
    ["bad", "good"],
    "proxy_next_upstream error non_idempotent;",
    " max_fails=0",
  ],
  ["h502", ["bad", "good"], "proxy_next_upstream error timeout http_502;", ""],
  ["h404", ["bad", "good"], "proxy_next_upstream http_404;", ""],
  ["last", ["bad", "bad2"], "proxy_next_upstream http_502;", " max_fails=0"],
  ["post502", ["bad", "good"], "proxy_next_upstream http_502;", ""],
  [
    "tries",
    ["bad", "bad2", "good"],
    "proxy_next_upstream http_502; proxy_next_upstream_tries 2;",
    " max_fails=0",
  ],
  [
    "errtries",
    ["refused", "refused2", "good"],
    "proxy_next_upstream_tries 2;",
    " max_fails=0",
  ],
  [
    "ws",
    ["bad", "good"],
    'proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; proxy_next_upstream http_502;',
    "",
  ],
  [
    "deadline",
    ["bad", "good"],
    "proxy_next_upstream_timeout 100ms;",
    " max_fails=0",
  ],
];

/** Each location: its group's servers and its own `proxy_next_upstream`. */
function conf(
  port: number,
  ports: Record<Server, number>,
): string {
  const group = (name: string, servers: number[], params = "") =>
    `  upstream ${name} {\n${
      servers.map((s) => `    server 127.0.0.1:${s}${params};\n`).join("")
    }  }`;
  const loc = (name: string, lines: string) =>
    `    location /${name}/ { proxy_pass http://${name}; ${lines} }`;
  return `${PROCESS}error_log logs/error.log warn;
events {}
http {
${TEMP}
  log_format up '$status $request_method $uri $upstream_addr $upstream_status';
${
    CASES.map(([name, servers, , params]) =>
      group(name, servers.map((s) => ports[s]), params)
    ).join("\n")
  }
  server {
    listen 127.0.0.1:${port};
    access_log logs/access.log up;
    proxy_read_timeout 300ms;
${CASES.map(([name, , lines]) => loc(name, lines)).join("\n")}
  }
}
`;
}

function get(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`;
}

function post(path: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
}

/** Status and, for a server's answer, which server it was. */
function outcome(raw: string): string {
  const status = raw.slice(9, 12);
  const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  return /^(good|bad|bad2)$/.test(body) ? `${status} ${body}` : status;
}

/** [request, what nginx 1.22 answers] */
const REQUESTS: [string, string][] = [
  // The default `error timeout` moves a stalled GET on.
  [get("/default/stall"), "200 good"],
  // `error` alone: a timeout is not moved on (504), a close is.
  [get("/errstall/stall"), "504"],
  [get("/errclose/close"), "200 good"],
  // `off`: a refused connection is the answer.
  [get("/off/x"), "502"],
  // A POST already sent moves on only with `non_idempotent`.
  [post("/idem/close"), "502"],
  [post("/nonidem/close"), "200 good"],
  // An answer whose status is named is dropped while servers remain; a
  // 502 takes the server out (max_fails=1), a 404 does not.
  [get("/h502/s502"), "200 good"],
  [get("/h404/s404"), "200 good"],
  // The 502 took the server out: the next request goes to the other.
  [get("/h502/s502"), "200 good"],
  // The last server's answer is relayed as it came.
  [get("/last/s502"), "502 bad2"],
  // A POST's named status without `non_idempotent` is relayed, and is
  // no failure of the server.
  [post("/post502/s502"), "502 bad"],
  [post("/post502/s502"), "200 good"],
  [post("/post502/s502"), "502 bad"],
  // proxy_next_upstream_tries bounds the servers tried, answers and
  // failures alike.
  [get("/tries/s502"), "502 bad2"],
  [get("/errtries/x"), "502"],
  // No next server once proxy_next_upstream_timeout has passed (the
  // 300 ms read timeout outlasts it).
  [get("/deadline/stall"), "504"],
  // A WebSocket handshake's answer is judged as any other.
  [
    "GET /ws/s502 HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    "200 good",
  ],
];

Deno.test("proxy_next_upstream moves on, or not, as nginx 1.22 does", async () => {
  const refused = refusedPort();
  await using bad = badServer("bad");
  await using bad2 = badServer("bad2");
  await using good = goodServer();
  const ports = {
    refused,
    refused2: refusedPort(),
    bad: bad.port,
    bad2: bad2.port,
    good: good.port,
  };
  await using both = await bothSides((port) => conf(port, ports));
  const seen: Record<"nginx" | "gateway", string[]> = {
    nginx: [],
    gateway: [],
  };
  for (const [request] of REQUESTS) {
    for (const side of ["nginx", "gateway"] as const) {
      seen[side].push(outcome(await rawRequest(both[side].port, request)));
    }
  }
  deepStrictEqual(seen.nginx, REQUESTS.map(([, expected]) => expected));
  deepStrictEqual(seen.gateway, seen.nginx);
  for (const side of [both.nginx, both.gateway]) {
    await waitFor(() =>
      logLines(side.prefix, "access.log").length === REQUESTS.length
    );
  }
  const [nginx, gateway] = [both.nginx, both.gateway].map((side) => ({
    access: logLines(side.prefix, "access.log"),
    errors: logLines(side.prefix, "error.log")
      // A request's lines (the gateway's start warns of directives too).
      .filter((l) => l.includes(", client: ")).map(maskErrorLine),
  }));
  deepStrictEqual(gateway!.access, nginx!.access);
  deepStrictEqual(gateway!.errors, nginx!.errors);
});
