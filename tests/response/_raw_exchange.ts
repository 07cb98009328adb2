/**
 * One request on its own connection, its response read to the end and
 * undone (chunked framing, gzip), for the gzip filter's side-by-side test.
 */
import { gunzipSync } from "node:zlib";

const encode = (text: string) => new TextEncoder().encode(text);

/** One response as read off the socket. */
export interface Read {
  status: string;
  fields: string[];
  /** The body as sent (chunk framing included). */
  wire: number;
  /** The body after framing and gzip are undone. */
  body: string;
}

/** Sends `head` (with `Connection: close`) and reads the response. */
export async function request(port: number, head: string): Promise<Read> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), 10_000);
  const parts: Uint8Array[] = [];
  try {
    await conn.write(encode(`${head}\r\nConnection: close\r\n\r\n`));
    const buf = new Uint8Array(64 * 1024);
    for (let i = 0; i < 10_000; i++) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      parts.push(buf.slice(0, n));
    }
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (all.set(p, at), at + p.length), 0);
  const split = findBlank(all);
  const lines = new TextDecoder().decode(all.subarray(0, split)).split("\r\n");
  const fields = lines.slice(1).map((l) => {
    const colon = l.indexOf(":");
    return `${l.slice(0, colon).toLowerCase()}: ${l.slice(colon + 1).trim()}`;
  });
  const raw = all.subarray(split + 4);
  const chunked = fields.includes("transfer-encoding: chunked");
  let body = chunked ? dechunk(raw) : raw;
  if (fields.includes("content-encoding: gzip") && body.length > 0) {
    body = gunzipSync(body);
  }
  return {
    // The code: Deno.serve answers an HTTP/1.0 request with HTTP/1.0.
    status: lines[0]!.split(" ")[1]!,
    fields: fields.filter((f) => !/^(server|date|connection):/.test(f)).sort(),
    wire: raw.length,
    body: new TextDecoder().decode(body),
  };
}

/** Where the head ends (the blank line). */
export function findBlank(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (
      bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 &&
      bytes[i + 3] === 10
    ) return i;
  }
  throw new Error("Cannot read response: no end of head");
}

function dechunk(raw: Uint8Array): Uint8Array {
  const out: number[] = [];
  let at = 0;
  for (let i = 0; i < 10_000; i++) {
    const eol = raw.indexOf(13, at);
    const size = parseInt(new TextDecoder().decode(raw.subarray(at, eol)), 16);
    at = eol + 2;
    if (size === 0) break;
    out.push(...raw.subarray(at, at + size));
    at += size + 2;
  }
  return new Uint8Array(out);
}
