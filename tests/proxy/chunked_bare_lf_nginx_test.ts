/**
 * A chunked request body whose lines end in LF alone, sent to nginx 1.22
 * and to the gateway running the same nginx.conf (README,
 * chunked-bare-lf): nginx's chunked parser takes a bare LF and forwards
 * the body; Deno's HTTP/1 server waits for a CR LF that never comes (or
 * refuses the body at once), so the gateway answers 408 at
 * `client_body_timeout` (or 400) — and in every mode of reading the body,
 * the upstream gets nothing of the request: never half of it.
 */
import { deepStrictEqual } from "node:assert/strict";
import { readResponse } from "../_keep_alive.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";

function conf(port: number, upstream: number): string {
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  access_log logs/access.log;
  client_body_timeout 1s;
  server {
    listen 127.0.0.1:${port};
    location /b/ { proxy_pass http://127.0.0.1:${upstream}; }
    location /s/ {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_request_buffering off;
    }
    location /u/ {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_request_buffering off;
      client_max_body_size 0;
    }
  }
}
`;
}

/** [form, body, nginx's status, the gateway's status] */
const FORMS: [string, string, string, string][] = [
  ["every line LF", "3\nabc\n0\n\n", "200", "408"],
  ["the last chunk's lines LF", "3\r\nabc\r\n0\n\n", "200", "408"],
  ["the end LF", "3\r\nabc\r\n0\r\n\n", "200", "408"],
  // Refused at once: a 400 with nginx's line, or, when the body comes in
  // one read with the head, Deno closes before the handler runs.
  ["LF after the data", "3\r\nabc\n0\r\n\r\n", "200", "400 or closed"],
];

const LOCATIONS = ["b", "s", "u"];

/**
 * An upstream that records every byte each connection sends and answers
 * a request whose body has come by its `Content-Length`.
 */
function recordingUpstream(): AsyncDisposable & {
  port: number;
  received: string[];
} {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received: string[] = [];
  const open = new Set<Promise<void>>();
  const serve = async (conn: Deno.Conn) => {
    const at = received.push("") - 1;
    const buf = new Uint8Array(16 * 1024);
    try {
      for (let i = 0; i < 64; i++) {
        const n = await conn.read(buf);
        if (n === null) break;
        received[at] += String.fromCharCode(...buf.subarray(0, n));
        const text = received[at]!;
        const end = text.indexOf("\r\n\r\n");
        const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1];
        if (end >= 0 && text.length >= end + 4 + Number(length ?? 0)) {
          await conn.write(
            new TextEncoder().encode(
              "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            ),
          );
          break;
        }
      }
    } catch {
      // the proxy went away
    } finally {
      conn.close();
    }
  };
  const accepted = (async () => {
    for await (const conn of listener) {
      const done = serve(conn);
      open.add(done);
      done.then(() => open.delete(done));
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    received,
    async [Symbol.asyncDispose]() {
      listener.close();
      await accepted.catch(() => {});
      await Promise.all(open);
    },
  };
}

/** Sends a head, then the body once the head is read, and reads one answer. */
async function post(port: number, location: string, body: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const encode = (s: string) => new TextEncoder().encode(s);
    await conn.write(encode(
      `POST /${location}/x HTTP/1.1\r\nHost: station\r\n` +
        "Transfer-Encoding: chunked\r\n\r\n",
    ));
    await conn.write(encode(body));
    const head = await readResponse(conn, { buffer: new Uint8Array(0) });
    return head === null ? "closed" : head.slice(9, 12);
  } finally {
    conn.close();
  }
}

Deno.test("known difference chunked-bare-lf: nginx 1.22 forwards a chunked body with bare LF lines; the gateway answers 408 at client_body_timeout (or 400) and never forwards any of it", async () => {
  await using upstream = recordingUpstream();
  await using both = await bothSides((port) => conf(port, upstream.port));
  const { nginx: theirs, gateway: ours } = both;
  for (const [form, body, nginxStatus] of FORMS) {
    for (const location of LOCATIONS) {
      const before = upstream.received.length;
      deepStrictEqual(
        await post(theirs.port, location, body),
        nginxStatus,
        `nginx, ${form}, /${location}/`,
      );
      // nginx forwards the body it read: `abc` with its length.
      deepStrictEqual(
        upstream.received.slice(before).map((r) =>
          r.endsWith("\r\n\r\nabc") && /content-length: 3/i.test(r)
        ),
        [true],
      );
    }
  }
  const before = upstream.received.length;
  // Each waits for client_body_timeout: all at once.
  const ourStatuses = await Promise.all(
    FORMS.flatMap(([, body]) =>
      LOCATIONS.map((location) => post(ours.port, location, body))
    ),
  );
  deepStrictEqual(
    ourStatuses.map((status, i) =>
      FORMS[Math.floor(i / LOCATIONS.length)]![3].split(" or ").includes(
          status,
        )
        ? "as expected"
        : status
    ),
    ourStatuses.map(() => "as expected"),
  );
  // Nothing of any of them reached the upstream.
  deepStrictEqual(upstream.received.slice(before), []);
});
