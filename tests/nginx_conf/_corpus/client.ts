/**
 * The corpus harness's client: one request per connection on raw TCP (so
 * the status line and every field are seen as sent), and a WebSocket
 * exchange of one text message.
 *
 * @module
 */

/** A response as the client saw it. */
export interface Seen {
  /** The status code, or `---` when nothing (or no HTTP) came back. */
  status: string;
  /** Every field, in order, as sent. */
  fields: [string, string][];
  /** The body (de-chunked), as text; a WebSocket's echoed message. */
  body: string;
}

/** One request of a probe set. */
export interface Probe {
  /** What it is for, e.g. `deep SPA route`. */
  label: string;
  method: string;
  /** The request target. */
  target: string;
  /** Extra fields. */
  fields?: [string, string][];
  /** A body, sent with Content-Length (or chunked, with `chunked`). */
  body?: string;
  chunked?: boolean;
  /** Open a WebSocket and exchange one message. */
  websocket?: boolean;
  /** The `Host` field, when not the default one. */
  host?: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function parse(raw: Uint8Array): Seen {
  const text = dec.decode(raw);
  const end = text.indexOf("\r\n\r\n");
  const head = end < 0 ? text : text.slice(0, end);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const status = statusLine.match(/^HTTP\/1\.[01] (\d{3})/)?.[1] ?? "---";
  const fields = lines.filter((l) => l.includes(":")).map(
    (l): [string, string] => {
      const at = l.indexOf(":");
      return [l.slice(0, at), l.slice(at + 1).trim()];
    },
  );
  let body = end < 0 ? "" : text.slice(end + 4);
  const chunked = fields.some(([k, v]) =>
    k.toLowerCase() === "transfer-encoding" && /chunked/i.test(v)
  );
  if (chunked) {
    let out = "";
    let rest = body;
    for (let i = 0; i < 10_000; i++) {
      const nl = rest.indexOf("\r\n");
      const n = parseInt(rest.slice(0, nl), 16);
      if (!(n > 0)) break;
      out += rest.slice(nl + 2, nl + 2 + n);
      rest = rest.slice(nl + 2 + n + 2);
    }
    body = out;
  }
  return { status, fields, body };
}

function requestText(probe: Probe, host: string): string {
  const lines = [
    `${probe.method} ${probe.target} HTTP/1.1`,
    `Host: ${probe.host ?? host}`,
    "User-Agent: corpus-probe",
    "Accept: text/html,application/json,*/*",
    ...(probe.fields ?? []).map(([k, v]) => `${k}: ${v}`),
  ];
  if (probe.websocket) {
    lines.push(
      "Connection: Upgrade",
      "Upgrade: websocket",
      "Sec-WebSocket-Version: 13",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    );
    return lines.join("\r\n") + "\r\n\r\n";
  }
  lines.push("Connection: close");
  if (probe.body === undefined) return lines.join("\r\n") + "\r\n\r\n";
  const bytes = enc.encode(probe.body).length;
  if (probe.chunked) {
    lines.push("Transfer-Encoding: chunked");
    return lines.join("\r\n") +
      `\r\n\r\n${bytes.toString(16)}\r\n${probe.body}\r\n0\r\n\r\n`;
  }
  lines.push(`Content-Length: ${bytes}`);
  return lines.join("\r\n") + "\r\n\r\n" + probe.body;
}

/** A client-to-server text frame (masked, RFC 6455 §5.3). */
function textFrame(text: string, opcode = 1): Uint8Array {
  const data = enc.encode(text);
  const mask = [1, 2, 3, 4];
  return new Uint8Array([
    0x80 | opcode,
    0x80 | data.length,
    ...mask,
    ...data.map((b, i) => b ^ mask[i % 4]!),
  ]);
}

/**
 * Sends one probe on a new connection and returns what came back, waiting
 * at most `timeoutMs` in all.
 *
 * @param port The server's port on 127.0.0.1.
 * @param probe The request.
 * @param host The `Host` field, unless the probe names one.
 * @param timeoutMs The deadline for the whole exchange.
 * @param caCerts Speak TLS (HTTP/1.1, no ALPN), trusting these PEM
 * certificates: the port is a `listen … ssl` one.
 * @returns The response (status `---` when none came).
 */
export async function send(
  port: number,
  probe: Probe,
  host: string,
  timeoutMs = 3000,
  caCerts?: string[],
): Promise<Seen> {
  let conn: Deno.Conn;
  try {
    conn = caCerts === undefined
      ? await Deno.connect({ hostname: "127.0.0.1", port })
      : await Deno.connectTls({ hostname: "127.0.0.1", port, caCerts });
  } catch {
    return { status: "---", fields: [], body: "connect failed" };
  }
  const timer = setTimeout(() => {
    try {
      conn.close();
    } catch { /* closed already */ }
  }, timeoutMs);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const read = async (until: (all: Uint8Array) => boolean) => {
    const buf = new Uint8Array(64 * 1024);
    while (total < 4 << 20) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return;
      chunks.push(buf.slice(0, n));
      total += n;
      if (until(concat(chunks))) return;
    }
  };
  try {
    await conn.write(enc.encode(requestText(probe, host)));
    if (!probe.websocket) {
      await read(() => false);
      return parse(concat(chunks));
    }
    await read((all) => dec.decode(all).includes("\r\n\r\n"));
    const head = parse(concat(chunks));
    if (head.status !== "101") return head;
    const headLength = dec.decode(concat(chunks)).indexOf("\r\n\r\n") + 4;
    await conn.write(textFrame("corpus-echo"));
    await read((all) => all.length >= headLength + 2 + "corpus-echo".length);
    const frame = concat(chunks).subarray(headLength);
    await conn.write(textFrame("", 8)).catch(() => 0);
    return { ...head, body: dec.decode(frame.subarray(2)) };
  } catch {
    return parse(concat(chunks));
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
