/**
 * A format and an `if=` that read no field beyond `combined`'s (so no
 * request keeps a copy of its fields), sent the same requests by nginx
 * 1.22 and by the gateway running the same nginx.conf: the lines are
 * nginx's, `$remote_user`, `Referer` and `User-Agent` included, for
 * answers from the gateway and from an upstream alike.
 */
import { deepStrictEqual } from "node:assert/strict";
import { rawRequest, startUpstream, waitFor } from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format f '$status|$remote_user|$http_referer|$http_user_agent|$request|$upstream_status';
  map $status $loggable { ~^[23] 0; default 1; }
  server {
    listen 127.0.0.1:${port};
    access_log logs/kept.log f if=$loggable;
    location / { return 404; }
    location /ok { return 204; }
    location /api/ { proxy_pass http://127.0.0.1:${upstream}/; }
  }
}
`;
}

const FIELDS = `Authorization: Basic ${
  btoa("st:pw")
}\r\nReferer: http://r/\r\nUser-Agent: ua\r\nConnection: close\r\n`;

const REQUESTS = [
  `GET /missing HTTP/1.1\r\nHost: t\r\n${FIELDS}\r\n`,
  `GET /ok HTTP/1.1\r\nHost: t\r\n${FIELDS}\r\n`,
  `POST /api/x HTTP/1.1\r\nHost: t\r\n${FIELDS}Content-Length: 2\r\n\r\nhi`,
  `GET /api/y HTTP/1.1\r\nHost: t\r\n${FIELDS}\r\n`,
  "get / HTTP/1.1\r\nHost: t\r\n\r\n",
];

Deno.test("a format and if= reading no kept field write nginx 1.22's lines", async () => {
  await using upstream = startUpstream((req) =>
    new Response("", { status: req.target === "/x" ? 500 : 200 })
  );
  await using both = await bothSides((port) => conf(port, upstream.port));
  const { nginx: theirs, gateway: ours } = both;
  for (const request of REQUESTS) {
    await rawRequest(theirs.port, request);
    await rawRequest(ours.port, request);
  }
  for (const side of [theirs, ours]) {
    await waitFor(() => logLines(side.prefix, "kept.log").length === 3);
  }
  const [nginx, gateway] = [theirs, ours].map((side) =>
    logLines(side.prefix, "kept.log").map((l) =>
      l.replace(/127\.0\.0\.1:\d+/, "UP")
    )
  );
  deepStrictEqual(gateway, nginx);
  deepStrictEqual(nginx, [
    "404|st|http://r/|ua|GET /missing HTTP/1.1|-",
    "500|st|http://r/|ua|POST /api/x HTTP/1.1|500",
    "400|-|-|-|get / HTTP/1.1|-",
  ]);
});
