/**
 * A variable's value in a header value, beside nginx 1.22 running the same
 * nginx.conf: nginx works on bytes (`$uri` decoded from `%C3%A9` is C3 A9),
 * so every path where a value becomes a field — `add_header`, `return`'s
 * and `rewrite`'s `Location`, an `error_page` URL, `proxy_set_header`,
 * `proxy_redirect`, `proxy_cookie_path` — carries the same bytes on both
 * sides, for each class of value, as does `return`'s text in a body. The client's side is read off a raw
 * socket, the upstream's by a real upstream that records the bytes.
 */
import { deepStrictEqual } from "node:assert/strict";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    root html;
    location /h/ {
      add_header X-Uri $uri always;
      add_header X-Field $http_x_in always;
      add_header X-Arg $arg_v always;
      add_header Set-Cookie "u=$uri" always;
      return 302 /r$uri;
    }
    location /e/ { error_page 404 http://e.test$uri; }
    location /t/ { default_type text/plain; return 200 "$uri|$http_x_in"; }
    location /w/ { rewrite ^ http://w.test$uri?f=$http_x_in redirect; }
    location /p/ {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_set_header X-Uri $uri;
      proxy_set_header X-Field $http_x_in;
      proxy_redirect http://up/ $uri/;
      proxy_cookie_path /c/ $uri/;
    }
  }
}
`;
}

/** [class, the target's path after the location, `X-In`'s bytes (latin1)] */
const CLASSES: [string, string, string][] = [
  ["ASCII", "plain", "plain"],
  ["2-byte UTF-8, escaped", "caf%C3%A9", "caf\xc3\xa9"],
  ["2-byte UTF-8, raw", "caf\xc3\xa9", "\xc3\xa9"],
  ["3-byte UTF-8", "%E4%B8%AD", "\xe4\xb8\xad"],
  ["not UTF-8 in a field", "x", "caf\xe9\xff"],
  // A path's bytes that are not UTF-8, each way they can fail to be.
  ["not UTF-8 in the path", "a%FFb", "plain"],
  ["a lone continuation byte", "a%80", "plain"],
  ["a cut sequence", "%E4%B8", "plain"],
  ["an overlong sequence", "%C0%AF", "plain"],
  ["not UTF-8, then UTF-8", "%FF%C3%A9", "plain"],
  ["not UTF-8 behind an escaped slash", "x%2f%ff", "plain"],
  ["tab", "a%09b", "a\tb"],
  // (Deno refuses a control byte in a field itself: request-line-parser.)
  ["control byte", "a%01b", "plain"],
];

/**
 * What differs by design: a control byte a variable brings into a response
 * field is sent escaped (`%01`), where nginx copies it (README,
 * field-line-break; Deno's writer ends the process on one).
 */
function known(field: string): string {
  return field.replaceAll("\x01", "%01");
}

/** Sends bytes (one char per byte) and reads the whole answer as bytes. */
async function exchange(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(Uint8Array.from(head, (c) => c.charCodeAt(0)));
    const bytes = await new Response(conn.readable).bytes();
    return String.fromCharCode(...bytes);
  } catch (error) {
    conn.close();
    throw error;
  }
}

/** The status and the fields compared, one char per byte. */
function fieldsOf(raw: string): string[] {
  const [status = "", ...lines] = raw.slice(0, raw.indexOf("\r\n\r\n"))
    .split("\r\n");
  return [
    status.split(" ")[1]!,
    ...lines.map((l) => {
      const colon = l.indexOf(":");
      return `${l.slice(0, colon).toLowerCase()}: ${l.slice(colon + 1).trim()}`;
    }).filter((l) =>
      /^(location|x-uri|x-field|x-arg|set-cookie|x-bad):/.test(l)
    )
      .sort(),
  ];
}

/**
 * An upstream that records each request's head as bytes and answers a
 * redirect with a cookie, for `proxy_redirect` and `proxy_cookie_path`.
 */
function recordingUpstream(
  answer = "HTTP/1.1 302 Found\r\nLocation: http://up/next\r\n" +
    "Set-Cookie: id=1; Path=/c/x\r\nContent-Length: 0\r\n" +
    "Connection: close\r\n\r\n",
): AsyncDisposable & {
  port: number;
  heads: string[];
} {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const heads: string[] = [];
  const served = (async () => {
    for await (const conn of listener) {
      let head = "";
      const buf = new Uint8Array(16 * 1024);
      // One head per connection, at most 16 reads.
      for (let i = 0; i < 16 && !head.includes("\r\n\r\n"); i++) {
        const n = await conn.read(buf);
        if (n === null) break;
        head += String.fromCharCode(...buf.subarray(0, n));
      }
      heads.push(head);
      await conn.write(Uint8Array.from(answer, (c) => c.charCodeAt(0)));
      conn.close();
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    heads,
    async [Symbol.asyncDispose]() {
      listener.close();
      await served.catch(() => {});
    },
  };
}

/** The request line and the fields `proxy_set_header` sent, one char per byte. */
function sentFields(head: string): string[] {
  const lines = head.split("\r\n");
  return [
    lines[0]!,
    ...lines.filter((l) => /^x-(uri|field):/i.test(l)).map(
      (l) => l.toLowerCase().replace(/^(x-\w+): /, "$1: "),
    ).sort(),
  ];
}

Deno.test("a variable's value goes into every kind of header field as the bytes nginx 1.22 sends, for each class of value", async (t) => {
  await using upstream = recordingUpstream();
  await using both = await bothSides((port) => conf(port, upstream.port));
  const { nginx: theirs, gateway: ours } = both;
  for (const [name, path, field] of CLASSES) {
    await t.step(name, async () => {
      for (const location of ["h", "e", "w", "p"]) {
        const head = `GET /${location}/${path}?v=${path} HTTP/1.1\r\n` +
          `Host: station\r\nX-In: ${field}\r\nConnection: close\r\n\r\n`;
        const theirHeads = upstream.heads.length;
        const theirFields = fieldsOf(await exchange(theirs.port, head));
        const theirSent = upstream.heads.slice(theirHeads).map(sentFields);
        const ourHeads = upstream.heads.length;
        const ourFields = fieldsOf(await exchange(ours.port, head));
        const ourSent = upstream.heads.slice(ourHeads).map(sentFields);
        // The origin a redirect is made absolute with names each side's port.
        deepStrictEqual(
          ourFields.map((f) => f.replace(`:${ours.port}/`, ":PORT/")),
          theirFields.map((f) =>
            known(f.replace(`:${theirs.port}/`, ":PORT/"))
          ),
          `/${location}/ fields`,
        );
        deepStrictEqual(ourSent, theirSent, `/${location}/ upstream`);
        // Each path was taken: a redirect, and the upstream's two fields.
        deepStrictEqual(
          theirFields.some((f) => f.startsWith("location: ")),
          true,
          `/${location}/ redirects`,
        );
        if (location === "p") {
          deepStrictEqual(theirSent.map((s) => s.length), [3]);
        }
      }
      // `return`'s text: the same bytes in the body.
      const head = `GET /t/${path} HTTP/1.1\r\nHost: station\r\n` +
        `X-In: ${field}\r\nConnection: close\r\n\r\n`;
      const body = (raw: string) => raw.slice(raw.indexOf("\r\n\r\n") + 4);
      deepStrictEqual(
        body(await exchange(ours.port, head)),
        body(await exchange(theirs.port, head)),
        "/t/ body",
      );
    });
  }
});

Deno.test("an upstream's field with a control byte reaches the client escaped, and the gateway keeps serving (nginx relays the byte)", async () => {
  await using upstream = recordingUpstream(
    "HTTP/1.1 200 OK\r\nX-Bad: a\x01b\x7f\r\nContent-Length: 0\r\n" +
      "Connection: close\r\n\r\n",
  );
  await using both = await bothSides((port) => conf(port, upstream.port));
  const { nginx: theirs, gateway: ours } = both;
  const head =
    "GET /p/x HTTP/1.1\r\nHost: station\r\nConnection: close\r\n\r\n";
  const theirFields = fieldsOf(await exchange(theirs.port, head));
  deepStrictEqual(theirFields, ["200", "x-bad: a\x01b\x7f"]);
  for (let i = 0; i < 2; i++) {
    deepStrictEqual(fieldsOf(await exchange(ours.port, head)), [
      "200",
      "x-bad: a%01b%7F",
    ]);
  }
});
