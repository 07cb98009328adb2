/**
 * `$content_length` in the access line beside nginx 1.22, a table over
 * where the body goes (a `return` that discards it, a proxied location to
 * an HTTP/1.0 or HTTP/1.1 server), `proxy_request_buffering` on and off,
 * how the body ends (whole, cut by its client, stalled past
 * `client_body_timeout`) and how it is framed (`Content-Length`, chunked).
 *
 * A declared length is the field as sent, whatever became of the body
 * (ngx_http_variable_content_length reads `headers_in.content_length`).
 * A chunked body: read whole, its size; cut or stalled where nginx reads it
 * buffered (`ngx_http_request_body_chunked_filter` counts each piece), what
 * came of it; where it reads it unbuffered (`proxy_request_buffering off`
 * to an HTTP/1.1 server) and the reading did not end, nothing
 * (`r->reading_body` is still set); discarded by a `return`, 0 once it
 * ended (ngx_http_discard_request_body_filter).
 *
 * Every row runs at once, each on its own connection and URI, so the
 * stalled rows wait for one timeout; a row's client leaves on an event (a
 * `100 Continue`, the answer, its line written), never after a time.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  type RawUpstream,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("log/content_length_nginx_test.ts", ["nginx"]);

function conf(port: number, upstream: number, buffering: string): string {
  const proxied = `proxy_pass http://127.0.0.1:${upstream};`;
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  log_format len '$request_method $uri $status [$content_length]';
  access_log logs/access.log len;
  proxy_request_buffering ${buffering};
  client_body_timeout 1s;
  lingering_timeout 1s;
  server {
    listen 127.0.0.1:${port};
    server_name t;
    location /ret/ { return 200 "abc"; }
    location /http10/ { ${proxied} }
    location /http11/ { proxy_http_version 1.1; ${proxied} }
  }
}
`;
}

const WHERE = ["ret", "http10", "http11"] as const;
const ENDS = ["whole", "cut", "stalled"] as const;
const FRAMING = {
  length: {
    field: "Content-Length: 10",
    whole: "0123456789",
    part: "0123",
  },
  chunked: {
    field: "Transfer-Encoding: chunked",
    whole: "5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n",
    // Whole chunks: bytes that come with the close are lost to the
    // gateway with the connection (README request-length).
    part: "5\r\n01234\r\n",
  },
} as const;

interface Row {
  where: (typeof WHERE)[number];
  end: (typeof ENDS)[number];
  framing: keyof typeof FRAMING;
  uri: string;
}

const ROWS: Row[] = WHERE.flatMap((where) =>
  ENDS.flatMap((end) =>
    (["length", "chunked"] as const).map((framing) => ({
      where,
      end,
      framing,
      uri: `/${where}/${end}-${framing}`,
    }))
  )
);

/** The line of a row's URI in a side's log, if written. */
function lineOf(prefix: string, uri: string): string | undefined {
  return logLines(prefix, "access.log").find((l) => l.includes(` ${uri} `));
}

/** Sends one row, leaving as the row says. */
async function send(port: number, prefix: string, row: Row): Promise<void> {
  const framing = FRAMING[row.framing];
  const proxied = row.where !== "ret";
  // A proxied body is asked for first: nginx and the gateway read it then.
  const asks = proxied && row.end !== "whole";
  const head = `POST ${row.uri} HTTP/1.1\r\nHost: t\r\n${framing.field}\r\n` +
    `${asks ? "Expect: 100-continue\r\n" : ""}Connection: close\r\n\r\n`;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let got = "";
  const reading = (async () => {
    const buf = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return;
      got += new TextDecoder().decode(buf.subarray(0, n));
    }
  })();
  try {
    const body = row.end === "whole" ? framing.whole : framing.part;
    if (asks) {
      await writeText(conn, head);
      await waitFor(() => got.startsWith("HTTP/1.1 100 "), 5000);
      await writeText(conn, body);
    } else {
      await writeText(conn, head + body);
    }
    if (row.end === "cut" && !proxied) {
      // A discarded body is cut once the answer came.
      await waitFor(() => got.includes("\r\n\r\n"), 5000);
    }
    if (row.end !== "cut") {
      await waitFor(() => lineOf(prefix, row.uri) !== undefined, 5000);
    }
  } finally {
    conn.close();
    await reading;
  }
}

/** An upstream that reads each request whole and answers it. */
function upstream(): RawUpstream {
  return startRawUpstream(async (conn) => {
    const buf = new Uint8Array(64 * 1024);
    let text = "";
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return;
      text += new TextDecoder().decode(buf.subarray(0, n));
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) continue;
      const head = text.slice(0, end);
      const body = text.slice(end + 4);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
      if (
        length === undefined
          ? body.endsWith("0\r\n\r\n")
          : body.length >= Number(length)
      ) break;
    }
    await writeText(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
  });
}

for (const buffering of ["on", "off"]) {
  Deno.test({
    name:
      `$content_length of a body whole, cut or stalled, with a length or chunked, as nginx 1.22 logs it, proxy_request_buffering ${buffering}`,
    ...NEEDS,
    fn: async () => {
      const upstreams = { nginx: upstream(), gateway: upstream() };
      await using _n = upstreams.nginx;
      await using _g = upstreams.gateway;
      await using sides = await bothSides((port, side) =>
        conf(port, upstreams[side].port, buffering)
      );
      const seen: Record<string, Record<string, string>> = {};
      for (const side of ["nginx", "gateway"] as const) {
        const { port, prefix } = sides[side];
        await Promise.all(ROWS.map((row) => send(port, prefix, row)));
        await waitFor(
          () => logLines(prefix, "access.log").length >= ROWS.length,
          5000,
        );
        seen[side] = Object.fromEntries(
          ROWS.map((row) => [row.uri, lineOf(prefix, row.uri) ?? "(none)"]),
        );
      }
      deepStrictEqual(seen.gateway, seen.nginx);
    },
  });
}
