/**
 * What one side showed for one probe, masked so that only behaviour is
 * compared: ports and the prefix become names, and the noise listed in
 * {@linkcode MASKED} is blanked. The first difference is reported in words.
 *
 * @module
 */

import type { Probe, Seen } from "./client.ts";
import type { Received } from "./upstream.ts";

/** What the masks blank, for the report. */
export const MASKED = [
  "client side: the values of Date, ETag, Last-Modified and Expires (presence is still compared)",
  "client side: Server, Connection and Keep-Alive entirely (Server is a product token; the other two describe the connection, RFC 9110 §7.6.1, and every probe asks for Connection: close)",
  "client side: Content-Length of responses other than 2xx (nginx's built-in pages differ from the gateway's by design: README, error-page)",
  "client side: the body of every response except 2xx ones and WebSocket echoes",
  "upstream side: field-name case and order (names compared lower-cased, fields sorted)",
  "both: listen ports, upstream ports and the station folder, replaced by LISTEN_n, UPSTREAM_n and PREFIX",
  "upstream side, unless --strict: the HTTP version of the request line and a Connection field of close or keep-alive (README, upstream-keepalive)",
  "logs: the byte count of a WebSocket's 101 (the gateway answers a close frame itself: README, upgrade)",
  "upstream side: the value of Sec-WebSocket-Key (the gateway makes its own handshake: README, upgrade)",
  "client side, on a TLS port unless --strict: Content-Length and Transfer-Encoding, how the body is framed (the gateway sends bodies chunked there: README, tls-nagle); the body itself is still compared",
  "logs: `[info] client closed connection while waiting for request` lines (the harness's own readiness connections send nothing, and nginx writes these at times of its choosing)",
  "both: a listen or upstream port standing alone in a value (X-Forwarded-Port: $server_port), as in host:port",
  "logs: the time, pid#tid and *N of error lines; the time and, for status 300 and above (the built-in pages: README, error-page), the byte count of access lines; $request_time-style decimals",
];

/** The names a side's ports and folder are replaced with. */
export interface Names {
  prefix: string;
  listen: number[];
  upstream: number[];
}

/** Replaces a side's ports and folder with names. */
export function maskText(text: string, names: Names): string {
  let out = text.replaceAll(names.prefix, "PREFIX");
  // A port after `:` (host:port), after a blank or alone (a value such as
  // `$server_port`), never inside a longer number.
  const each = (ports: number[], name: string) =>
    ports.forEach((port, i) => {
      out = out.replace(
        new RegExp(`(?<![^:\\s])${port}(?!\\d)`, "g"),
        `${name}_${i + 1}`,
      );
    });
  each(names.upstream, "UPSTREAM");
  each(names.listen, "LISTEN");
  return out;
}

const NOISE = new Set(["date", "etag", "last-modified", "expires"]);
const DROPPED = new Set(["server", "connection", "keep-alive"]);

/** One probe's outcome on one side, masked. */
export interface Outcome {
  status: string;
  fields: string[];
  body: string;
  upstream: string[];
}

/**
 * Masks what the client saw and what the upstreams received for a probe.
 *
 * @param seen The response.
 * @param received The requests the upstreams got during the probe.
 * @param names The side's ports and folder.
 * @param strict Compare the named differences too.
 * @param tls The probe went to a TLS port: its body framing is masked.
 * @returns The comparable outcome.
 */
export function outcome(
  seen: Seen,
  received: Received[],
  names: Names,
  strict = false,
  tls = false,
): Outcome {
  const status = Number(seen.status);
  const framing = tls && !strict;
  const fields = seen.fields.filter(([k]) =>
    !DROPPED.has(k.toLowerCase()) &&
    !(framing && /^(content-length|transfer-encoding)$/i.test(k))
  )
    .map(([k, v]) => {
      const name = k.toLowerCase();
      if (NOISE.has(name)) return `${name}: *`;
      const ok = status >= 200 && status < 300;
      if (name === "content-length" && !ok) return `${name}: *`;
      return `${name}: ${maskText(v, names)}`;
    }).sort();
  const body = status >= 200 && status < 300 || status === 101
    ? maskText(seen.body, names)
    : "";
  const upstream = received.map((r) =>
    [
      `upstream ${r.upstream}: ${
        maskText(
          strict ? r.requestLine : r.requestLine.replace(/1\.[01]$/, "1.x"),
          names,
        )
      }`,
      ...r.fields.filter(([k, v]) =>
        strict || k.toLowerCase() !== "connection" ||
        !/^(close|keep-alive)$/i.test(v)
      ).map(([k, v]) =>
        k.toLowerCase() === "sec-websocket-key"
          ? "  sec-websocket-key: *"
          : `  ${k.toLowerCase()}: ${maskText(v, names)}`
      )
        .sort(),
      `  body: ${r.framing} ${JSON.stringify(r.body)}`,
    ].join("\n")
  );
  return { status: seen.status, fields, body, upstream };
}

/**
 * The first difference between nginx's outcome and the gateway's, or null.
 *
 * @param probe The request.
 * @param nginx nginx's outcome.
 * @param gateway The gateway's.
 * @returns A sentence naming the difference.
 */
export function difference(
  probe: Probe,
  nginx: Outcome,
  gateway: Outcome,
): string | null {
  const what = `${
    probe.host ? `${probe.host} ` : ""
  }${probe.method} ${probe.target}${
    probe.websocket ? " (WebSocket)" : ""
  } [${probe.label}]`;
  if (nginx.status !== gateway.status) {
    return `${what}: status ${nginx.status} (nginx) vs ${gateway.status}`;
  }
  const n = nginx.upstream.join("\n");
  const g = gateway.upstream.join("\n");
  if (n !== g) {
    return `${what}: upstream received ${firstLine(n, g)}`;
  }
  const nf = nginx.fields.join("\n");
  const gf = gateway.fields.join("\n");
  if (nf !== gf) return `${what}: response fields ${firstLine(nf, gf)}`;
  if (nginx.body !== gateway.body) {
    return `${what}: body ${JSON.stringify(nginx.body.slice(0, 60))} vs ${
      JSON.stringify(gateway.body.slice(0, 60))
    }`;
  }
  return null;
}

/** The first line that differs between two texts, both sides shown. */
export function firstLine(a: string, b: string): string {
  const al = a.split("\n");
  const bl = b.split("\n");
  for (let i = 0; i < Math.max(al.length, bl.length); i++) {
    if (al[i] !== bl[i]) {
      return `${JSON.stringify(al[i] ?? "(none)")} (nginx) vs ${
        JSON.stringify(bl[i] ?? "(none)")
      }`;
    }
  }
  return "(same)";
}

/** Masks an error-log or access-log line. */
export function maskLogLine(line: string, names: Names): string {
  const error = line.match(
    /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d (\[\w+\]) \d+#\d+: (?:\*\d+ )?(.*)$/,
  );
  if (error) return maskText(`TIME ${error[1]} ${error[2]}`, names);
  return maskText(line, names)
    .replace(/\d\d\/\w{3}\/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}/g, "TIME")
    .replace(/" ([345]\d\d|101) \d+ "/, '" $1 BYTES "')
    .replace(/\b\d+\.\d{3}\b/g, "D.DDD");
}
