/**
 * `fastcgi_pass` side by side with nginx 1.22 on the same nginx.conf and
 * the same FastCGI responder (`_fastcgi_responder.ts`): the status, the
 * fields the client sees, the body, the parameters the responder received
 * (nginx's stock `fastcgi_params` and `fastcgi.conf`, `fastcgi_param` with
 * variables and `if_not_empty`, `fastcgi_split_path_info`, `fastcgi_index`,
 * the client's fields as `HTTP_*`), and the error lines: `STDERR`, a
 * refused connection, and each hostile or broken answer.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { maskErrorLine, rawRequest, refusedPort, waitFor } from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import {
  type FastcgiSeen,
  startFastcgiResponder,
} from "../_fastcgi_responder.ts";

const STOCK = new URL("../testdata/fastcgi/", import.meta.url);

function conf(port: number, fcgi: number, refused: number): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log logs/access.log;
  upstream php {
    server 127.0.0.1:${refused};
    server 127.0.0.1:${fcgi};
  }
  server {
    listen 127.0.0.1:${port};
    server_name t;
    root html;
    fastcgi_param FROM_SERVER s;
    # The two timeout rows wait fastcgi_read_timeout on each side: a short
    # one of their own (nginx's time values take ms), the 2 s below for
    # the rows that must not time out on a loaded machine. The responder
    # writes the stalled body's head and first bytes in one write as soon
    # as it has read the request.
    location ~ ^/(silent|stall-body)\\.php$ {
      fastcgi_pass 127.0.0.1:${fcgi};
      include fastcgi_params;
      fastcgi_read_timeout 400ms;
    }
    location ~ [^/]\\.php(/|$) {
      fastcgi_split_path_info ^(.+?\\.php)(/.*)$;
      fastcgi_pass 127.0.0.1:${fcgi};
      fastcgi_index index.php;
      include fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_param PATH_INFO $fastcgi_path_info;
      fastcgi_param HTTP_X_SET from-conf;
      fastcgi_param HTTP_X_GONE "";
      fastcgi_param MAYBE $arg_maybe if_not_empty;
      fastcgi_read_timeout 2s;
      fastcgi_hide_header X-Powered-By;
      fastcgi_pass_header X-Accel-Buffering;
    }
    location /dir/ {
      fastcgi_pass 127.0.0.1:${fcgi};
      fastcgi_index index.php;
      include fastcgi.conf;
    }
    location /refused {
      fastcgi_pass 127.0.0.1:${refused};
      include fastcgi_params;
    }
    location /intercept/ {
      fastcgi_pass 127.0.0.1:${fcgi};
      include fastcgi_params;
      fastcgi_intercept_errors on;
      error_page 404 = /caught;
    }
    location = /caught { return 200 "caught\\n"; }
    location /inherit/ {
      fastcgi_pass 127.0.0.1:${fcgi};
    }
    location /group/ {
      fastcgi_pass php;
      include fastcgi_params;
      fastcgi_pass_request_headers off;
    }
    location /noaccel/ {
      fastcgi_pass 127.0.0.1:${fcgi};
      include fastcgi_params;
      fastcgi_ignore_headers X-Accel-Redirect;
    }
    location /nobody/ {
      fastcgi_pass 127.0.0.1:${fcgi};
      include fastcgi_params;
      fastcgi_pass_request_body off;
    }
  }
}
`;
}

/** A side's answer: status line, chosen fields, body; what the responder got. */
interface Answer {
  status: string;
  fields: string[];
  body: string;
  params: [string, string][] | null;
  requestBody: string | null;
}

const FIELDS =
  /^(content-type|content-length|location|x-echo|x-powered-by|x-hidden|x-accel-buffering|x-accel-redirect|x-other|set-cookie|x-b|transfer-encoding|status):/i;

async function ask(
  port: number,
  text: string,
  seen: FastcgiSeen[],
  normal: (s: string) => string,
): Promise<Answer> {
  const before = seen.length;
  const raw = await rawRequest(port, text);
  const [head = "", ...rest] = raw.split("\r\n\r\n");
  const lines = head.split("\r\n");
  let body = rest.join("\r\n\r\n");
  if (/transfer-encoding: chunked/i.test(head)) body = unchunk(body);
  const got = seen.length > before ? seen[seen.length - 1]! : null;
  return {
    status: lines[0]!.split(" ").slice(0, 2).join(" "),
    // An error page's length differs by its signature line.
    fields: lines.slice(1).filter((l) => FIELDS.test(l)).map((l) =>
      l.toLowerCase()
    ).map((l) =>
      /<\/html>/.test(body)
        ? l.replace(/^content-length: \d+$/, "content-length: N")
        : l
    ).sort(),
    // An echo's body is the parameters, compared apart below.
    body: /\r\nx-echo: 1/i.test(head)
      ? "ECHO"
      : normal(body).replace(/<hr><center>[^<]*<\/center>/, "<hr>SIGNATURE"),
    params: got && got.params.map(([n, v]) => [n, normal(v)]),
    requestBody: got && got.body,
  };
}

function unchunk(text: string): string {
  let out = "";
  let at = 0;
  for (let i = 0; i < 1000; i++) {
    const eol = text.indexOf("\r\n", at);
    if (eol < 0) break;
    const n = parseInt(text.slice(at, eol), 16);
    if (!(n > 0)) break;
    out += text.slice(eol + 2, eol + 2 + n);
    at = eol + 2 + n + 2;
  }
  return out;
}

/** Marks a case whose body is a named difference (README proxy-buffering). */
const STREAMED = "(body streamed) ";

/** The `HTTP_*` parameters made from client fields (not set by the file). */
const CLIENT_FIELD = /^HTTP_(?!X_SET$)/;

const REQUESTS: [string, string][] = [
  [
    "a GET with a query, split path info and client fields",
    "GET /app/index.php/extra/path?a=1&b=%20 HTTP/1.1\r\nHost: t\r\nX-Requested-With: XMLHttpRequest\r\nX-Set: client\r\nX-Gone: client\r\nAccept: */*\r\nConnection: close\r\n\r\n",
  ],
  [
    "a POST with a form body",
    "POST /app/form.php?maybe=yes HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 11\r\nConnection: close\r\n\r\nname=a&b=%2",
  ],
  [
    "a chunked POST",
    "POST /app/form.php HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
  ],
  [
    "fastcgi_index for a folder",
    "GET /dir/ HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "stderr before the head",
    "GET /stderr.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "Status: 404",
    "GET /status.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "Location without Status",
    "GET /location.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "hidden and passed fields, Content-Length shorter than the output",
    "GET /accel.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a head past fastcgi_buffer_size",
    "GET /big-head.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a head that never ends",
    "GET /never-ends.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a record of an unknown type",
    "GET /bad-type.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a record of another version",
    "GET /bad-version.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "an invalid Status",
    "GET /invalid-status.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "an invalid field line",
    "GET /invalid-line.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "STDOUT ended before a head",
    "GET /no-head.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "X-Accel-Redirect followed, its Content-Type and Set-Cookie kept",
    "GET /x-accel.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "X-Accel-Redirect to a .. segment: 404 and nginx's unsafe URI line",
    "GET /accel-dotdot.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "X-Accel-Redirect with an escaped NUL: 404 and nginx's unsafe URI line",
    "GET /accel-nul.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "an empty X-Accel-Redirect: 404 and nginx's unsafe URI line",
    "GET /accel-empty.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "two Content-Type fields: the last counts",
    "GET /two-types.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "X-Accel-Redirect under fastcgi_ignore_headers: relayed, the field hidden",
    "GET /noaccel/x-accel.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "END_REQUEST before any STDOUT",
    "GET /end-first.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "no END_REQUEST, the connection closed",
    "GET /no-end.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "closed without an answer",
    "GET /closed.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "END_REQUEST short of Content-Length",
    "GET /short.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "two Content-Length fields: the last counts",
    "GET /two-lengths.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "endless padding records",
    "GET /padding.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "STDERR past the head buffer before the head",
    "GET /stderr-flood.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a record of 65000 bytes",
    "GET /huge-record.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a field line split across records",
    "GET /split-line.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a silent application: fastcgi_read_timeout",
    "GET /silent.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    // README proxy-buffering: the gateway sends what it read before the
    // stall, nginx's buffer held it.
    `${STREAMED}a body that stalls: fastcgi_read_timeout while reading upstream`,
    "GET /stall-body.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "a refused connection",
    "GET /refused HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
  [
    "an intercepted 404",
    "GET /intercept/status.php HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  ],
];

Deno.test("fastcgi_pass: what the client, the application and the error log see is nginx 1.22's", async () => {
  await using responder = startFastcgiResponder();
  const refused = refusedPort();
  await using both = await bothSides(
    (port) => conf(port, responder.port, refused),
    {
      prepare: async (prefix) => {
        for (const name of ["fastcgi_params", "fastcgi.conf"]) {
          await Deno.copyFile(new URL(name, STOCK), join(prefix, "conf", name));
        }
        await Deno.mkdir(join(prefix, "html"), { recursive: true });
      },
    },
  );
  const { nginx: theirs, gateway: ours } = both;
  for (const [what, text] of REQUESTS) {
    const answers: Answer[] = [];
    const lines: string[][] = [];
    for (const side of [theirs, ours]) {
      const normal = (s: string) =>
        s.replaceAll(side.prefix, "PREFIX").replaceAll(
          String(side.port),
          "PORT",
        )
          .replace(/"REMOTE_PORT","\d+"/, '"REMOTE_PORT","N"')
          // The gateway's error log escapes a control byte (README, log
          // escaping); nginx writes it raw.
          .replaceAll("\0", "\\x00");
      const before = logLines(side.prefix, "error.log").length;
      answers.push(await ask(side.port, text, responder.seen, normal));
      // nginx writes its line as the request ends; the gateway may be a
      // moment later for a body cut off.
      const want = side === ours ? lines[0]!.length : 0;
      await waitFor(
        () => logLines(side.prefix, "error.log").length - before >= want,
        5000,
      ).catch(() => {});
      lines.push(
        logLines(side.prefix, "error.log").slice(before).map((l) =>
          normal(maskErrorLine(l))
        ),
      );
    }
    const [nginxAnswer, gatewayAnswer] = answers;
    if (what.startsWith(STREAMED)) nginxAnswer!.body = gatewayAnswer!.body;
    // The configured parameters in their order; the client's fields after
    // them in any order (the runtime hands the gateway its fields sorted).
    const params = (a: Answer) => {
      const list = a.params?.filter(([n]) =>
        !["REMOTE_PORT", "SERVER_SOFTWARE"].includes(n)
      );
      if (list === undefined || list === null) return null;
      const set = list.filter(([n]) => !CLIENT_FIELD.test(n));
      const client = list.filter(([n]) => CLIENT_FIELD.test(n)).sort();
      return [...set, ...client];
    };
    deepStrictEqual(
      { ...gatewayAnswer!, params: params(gatewayAnswer!), lines: lines[1] },
      { ...nginxAnswer!, params: params(nginxAnswer!), lines: lines[0] },
      what,
    );
  }
});

Deno.test("fastcgi_pass: a client that leaves frees the application's connection, with nginx 1.22's line", async () => {
  await using responder = startFastcgiResponder();
  await using both = await bothSides(
    (port) =>
      `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location / { fastcgi_pass 127.0.0.1:${responder.port}; fastcgi_param DOCUMENT_URI $uri; }
  }
}
`,
  );
  const lines: string[][] = [];
  for (const side of [both.nginx, both.gateway]) {
    const seen = responder.seen.length;
    const ended = responder.ended;
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: side.port });
    await conn.write(
      new TextEncoder().encode("GET /silent.php HTTP/1.1\r\nHost: t\r\n\r\n"),
    );
    await waitFor(() => responder.seen.length > seen);
    conn.close();
    // The application's connection is closed by the side, not by a timer
    // (fastcgi_read_timeout is nginx's 60 s).
    await waitFor(() => responder.ended > ended);
    const leaving = /prematurely closed/;
    await waitFor(() =>
      logLines(side.prefix, "error.log").some((l) => leaving.test(l))
    );
    lines.push(
      logLines(side.prefix, "error.log").filter((l) => leaving.test(l)).map((
        l,
      ) => maskErrorLine(l).replace(/127\.0\.0\.1:\d+/g, "ADDR")),
    );
  }
  // README abort-syscall: nginx's line starts with the event call that
  // noticed the close, which the gateway cannot see.
  deepStrictEqual(
    lines[1],
    lines[0]!.map((l) =>
      l.replace("epoll_wait() reported that client", "client")
    ),
  );
});
