/**
 * `$cookie_NAME`, `$upstream_cookie_NAME` and the variables of a request
 * refused at its line, sent the same requests by nginx 1.22 and by the
 * gateway running the same nginx.conf: the `Cookie` field is read with
 * nginx's separators (`;` and `,` between pairs, a value up to `;`, names
 * without regard to case, spaces kept at a value's end), each `Set-Cookie`
 * line by its first pair only, and `if=` of a request refused at its line
 * finds no method, URI or arguments, as nginx.
 */
import { deepStrictEqual } from "node:assert/strict";
import { rawRequest, startUpstream, waitFor } from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format c '[$cookie_a][$cookie_b][$cookie_c][$cookie_d][$http_cookie][$a_seen]';
  log_format u '[$upstream_cookie_sid][$upstream_cookie_lang][$upstream_cookie_path][$upstream_cookie_expires][$upstream_cookie_b][$upstream_cookie_a]';
  log_format line '$status $request';
  map $cookie_a $a_seen { "" no; default yes; }
  server {
    listen 127.0.0.1:${port};
    access_log logs/c.log c;
    access_log logs/method.log line if=$request_method;
    access_log logs/target.log line if=$request_uri;
    access_log logs/args.log line if=$args;
    location / { return 204; }
    location /u { proxy_pass http://127.0.0.1:${upstream}; access_log logs/u.log u; }
  }
}
`;
}

/** `Cookie` fields, one request each: [what it is, the field lines]. */
const COOKIES: [string, string][] = [
  ["; with a space", "Cookie: a=1; b=2"],
  ["; alone", "Cookie: a=1;b=2"],
  ["a comma between pairs, not in a value", "Cookie: a=1,b=2"],
  ["case and spaces", "Cookie: A = 1 ; B=2 "],
  ["a name without =", "Cookie: a; b=2; c=3"],
  ["a name without =, then the same name", "Cookie: a; a=2"],
  ["empty values", "Cookie: a=; b="],
  ["a longer name first", "Cookie: x=1; aa=2; a=3"],
  ["duplicates", "Cookie: a=1; a=2"],
  ["comma then a bare name", "Cookie: c=1,d=2;e"],
  ["two lines", "Cookie: a=1\r\nCookie: b=2"],
  ["two lines, the name in the second", "Cookie: c=1\r\nCookie: a=2"],
  ["none", "X-None: 1"],
];

/** Requests refused at their line or target, with a served one before them. */
const REFUSED: string[] = [
  "GET /s?q=1 HTTP/1.1\r\nHost: t\r\n\r\n",
  "get /m?q=1 HTTP/1.1\r\nHost: t\r\n\r\n",
  "GET /%00?q=1 HTTP/1.1\r\nHost: t\r\n\r\n",
];

Deno.test("$cookie_NAME, $upstream_cookie_NAME and a refused line's variables are nginx 1.22's", async () => {
  await using upstream = startUpstream(() => {
    const headers = new Headers({ "content-length": "0" });
    headers.append(
      "set-cookie",
      "sid=1; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT",
    );
    headers.append("set-cookie", "LANG = en ;Max-Age=9");
    headers.append("set-cookie", "a=x, b=y");
    headers.append("set-cookie", "sid=2");
    return new Response(null, { headers });
  });
  await using both = await bothSides((port) => conf(port, upstream.port));
  const { nginx: theirs, gateway: ours } = both;
  const requests = [
    ...COOKIES.map(([, lines]) =>
      `GET /c HTTP/1.1\r\nHost: t\r\n${lines}\r\n\r\n`
    ),
    "GET /u HTTP/1.1\r\nHost: t\r\n\r\n",
    ...REFUSED,
  ];
  for (const request of requests) {
    await rawRequest(theirs.port, request);
    await rawRequest(ours.port, request);
  }
  const files = ["c.log", "u.log", "method.log", "target.log", "args.log"];
  for (const side of [theirs, ours]) {
    await waitFor(() =>
      logLines(side.prefix, "c.log").length === COOKIES.length + 3
    );
  }
  const [nginx, gateway] = [theirs, ours].map((side) =>
    Object.fromEntries(files.map((f) => [f, logLines(side.prefix, f)]))
  );
  deepStrictEqual(gateway, nginx);
  // What nginx wrote, in part.
  deepStrictEqual(nginx!["c.log"]!.slice(0, COOKIES.length), [
    "[1][2][-][-][a=1; b=2][yes]",
    "[1][2][-][-][a=1;b=2][yes]",
    "[1,b=2][2][-][-][a=1,b=2][yes]",
    "[1 ][2][-][-][A = 1 ; B=2][yes]",
    "[-][2][3][-][a; b=2; c=3][no]",
    "[-][-][-][-][a; a=2][no]",
    "[][][-][-][a=; b=][no]",
    "[3][-][-][-][x=1; aa=2; a=3][yes]",
    "[1][-][-][-][a=1; a=2][yes]",
    "[-][-][1,d=2][2][c=1,d=2;e][no]",
    "[1][2][-][-][a=1; b=2][yes]",
    "[2][-][1][-][c=1; a=2][yes]",
    "[-][-][-][-][-][no]",
  ]);
  deepStrictEqual(nginx!["u.log"], ["[1][en ][-][-][-][x, b=y]"]);
  deepStrictEqual(nginx!["method.log"]!.length, COOKIES.length + 2);
  deepStrictEqual(nginx!["target.log"]!.length, COOKIES.length + 1);
  deepStrictEqual(nginx!["args.log"], ["204 GET /s?q=1 HTTP/1.1"]);
});
