/**
 * A `proxy_pass` host from a variable, beside nginx 1.22 running the same
 * nginx.conf: what `ngx_parse_url` takes for an address (`ngx_inet_addr`,
 * `ngx_inet6_addr`) is connected to, a name that is not one gets 502 and
 * `no resolver defined to resolve …`, a malformed `[…]` 500 and its line.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  readHead,
  startRawUpstream,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  upstream u { server 127.0.0.010:${upstream}; }
  upstream Backend { server 127.0.0.1:${upstream}; }
  server {
    listen 127.0.0.1:${port};
    location /v/ { proxy_pass http://$arg_h; }
    location /p/ { proxy_pass http://127.0.0.010:${upstream}; }
    location /u/ { proxy_pass http://u; }
  }
}
`;
}

/** Hosts as a client may give them; `PORT` is the upstream's. */
const HOSTS = [
  "127.0.0.1:PORT",
  // ngx_inet_addr: decimal octets with leading zeros, an empty octet is 0.
  "127.000.000.001:PORT",
  "127.0..1:PORT",
  // Not three dots, or not decimal: a name, and no resolver.
  "127.1:PORT",
  "0x7f.0.0.1:PORT",
  "255.255.255.255:PORT",
  // ngx_inet6_addr, an IPv4 tail read by ngx_inet_addr.
  "[::ffff:127.0.0.1]:PORT",
  "[::ffff:127.000.0.001]:PORT",
  "[::ffff:127.0..1]:PORT",
  "[::ffff:7f00:1]:PORT",
  "[0:0:0:0:0:ffff:127.0.0.1]:PORT",
  // No zone, no other char; a `/` ends the host, a `?` does not.
  "[fe80::1%25lo]:PORT",
  "[::g]:PORT",
  "[::1]x",
  "[]:PORT",
  // An upstream{} name in any case (ngx_strncasecmp), without a port.
  "bAcKeNd",
  "BACKEND:PORT",
];

/** An `[error]` line's own words, before the request's context. */
function errorMessages(prefix: string): string[] {
  return logLines(prefix, "error.log").filter((l) => l.includes("[error]"))
    .map((l) => maskErrorLine(l).replace(/, client: .*$/, ""));
}

Deno.test("a proxy_pass host from a variable is an address where nginx 1.22 takes one", async (t) => {
  await using up = startRawUpstream(async (conn) => {
    if (await readHead(conn) === null) return;
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nup",
    );
  });
  await using both = await bothSides((port) => conf(port, up.port));
  const { nginx: theirs, gateway: ours } = both;
  for (const form of HOSTS) {
    const host = form.replace("PORT", String(up.port));
    await t.step(form, async () => {
      const request = `GET /v/x?h=${host} HTTP/1.1\r\nHost: station\r\n` +
        "Connection: close\r\n\r\n";
      const status = (raw: string) => raw.slice(9, 12);
      deepStrictEqual(
        status(await rawRequest(ours.port, request, 5000)),
        status(await rawRequest(theirs.port, request, 5000)),
      );
    });
  }
  await t.step("the same error lines", () => {
    const port = new RegExp(String(up.port), "g");
    // One line each for the eight that nginx refuses.
    deepStrictEqual(errorMessages(theirs.prefix).length, 8);
    deepStrictEqual(
      errorMessages(ours.prefix).map((l) => l.replace(port, "PORT")),
      errorMessages(theirs.prefix).map((l) => l.replace(port, "PORT")),
    );
  });
});

Deno.test("a proxy_pass or upstream{} address is read as nginx 1.22 reads it, not as the system's resolver would", async () => {
  // 127.0.0.010 is 127.0.0.10 to ngx_inet_addr, 127.0.0.8 to inet_aton.
  const listener = Deno.listen({ hostname: "127.0.0.10", port: 0 });
  const upstream = listener.addr.port;
  const served = (async () => {
    for await (const conn of listener) {
      (async () => {
        try {
          if (await readHead(conn) === null) return;
          await writeText(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nup",
          );
        } finally {
          conn.close();
        }
      })();
    }
  })();
  try {
    await using both = await bothSides((port) => conf(port, upstream));
    const { nginx: theirs, gateway: ours } = both;
    for (const path of ["/p/x", "/u/x"]) {
      const request = `GET ${path} HTTP/1.1\r\nHost: station\r\n` +
        "Connection: close\r\n\r\n";
      const status = async (p: number) =>
        (await rawRequest(p, request, 5000)).slice(9, 12);
      deepStrictEqual(
        [path, await status(ours.port)],
        [path, await status(theirs.port)],
      );
      deepStrictEqual(await status(theirs.port), "200");
    }
  } finally {
    listener.close();
    await served;
  }
});
