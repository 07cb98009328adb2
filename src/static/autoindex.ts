/**
 * `autoindex on` (`ngx_http_autoindex_module`, its HTML format): the listing
 * of a folder with no index file, byte for byte as nginx 1.22 writes it —
 * folders first, then names in byte order, dot-files left out, each name
 * escaped as a URI component in the link and as HTML in the text, cut at
 * 50 characters (bytes unless the response's charset is UTF-8), the
 * modification time in GMT (`autoindex_localtime on`: local) and the size
 * exact or rounded (`autoindex_exact_size off`).
 *
 * @module
 */

import { errorResponse, makeResponse } from "../response/mod.ts";
import { MONTH_NAMES } from "../runtime/mod.ts";

/** A location's `autoindex_*` settings. */
export interface AutoindexConf {
  /** `autoindex_exact_size` (on by default). */
  exactSize: boolean;
  /** `autoindex_localtime` (off by default: GMT). */
  localtime: boolean;
}

/** One entry of the listing. */
export interface AutoindexEntry {
  name: string;
  dir: boolean;
  /** Modification time, seconds since the epoch. */
  mtime: number;
  size: number;
}

/** What the listing is made for. */
export interface AutoindexPage {
  /** `$uri` (decoded), ending in `/`. */
  uri: string;
  entries: readonly AutoindexEntry[];
  conf: AutoindexConf;
  /** The response's charset is UTF-8: names are cut by characters. */
  utf8: boolean;
}

const NAME_LEN = 50;
const encoder = new TextEncoder();

/**
 * The bytes `ngx_escape_uri(…, NGX_ESCAPE_URI_COMPONENT)` leaves as they
 * are: letters, digits and `-._~` (every other byte becomes `%XX`).
 */
const URI_COMPONENT_SAFE = /^[A-Za-z0-9\-._~]$/;

function escapeUriComponent(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && URI_COMPONENT_SAFE.test(c)
      ? c
      : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** `ngx_escape_html`, on bytes. */
function escapeHtml(bytes: Uint8Array): Uint8Array {
  const parts: number[] = [];
  for (const b of bytes) {
    if (b === 0x3c) parts.push(...encoder.encode("&lt;"));
    else if (b === 0x3e) parts.push(...encoder.encode("&gt;"));
    else if (b === 0x26) parts.push(...encoder.encode("&amp;"));
    else if (b === 0x22) parts.push(...encoder.encode("&quot;"));
    else parts.push(b);
  }
  return Uint8Array.from(parts);
}

/** The first `chars` UTF-8 characters of `bytes` (`ngx_utf8_cpystrn`). */
function utf8Prefix(bytes: Uint8Array, chars: number): Uint8Array {
  let i = 0;
  for (let n = 0; n < chars && i < bytes.length; n++) {
    const b = bytes[i]!;
    i += b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  }
  return bytes.subarray(0, Math.min(i, bytes.length));
}

function utf8Length(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if ((b & 0xc0) !== 0x80) n++;
  return n;
}

function two(n: number): string {
  return String(n).padStart(2, "0");
}

function date(mtime: number, localtime: boolean): string {
  const d = new Date(mtime * 1000);
  const [day, month, year, hour, minute] = localtime
    ? [d.getDate(), d.getMonth(), d.getFullYear(), d.getHours(), d.getMinutes()]
    : [
      d.getUTCDate(),
      d.getUTCMonth(),
      d.getUTCFullYear(),
      d.getUTCHours(),
      d.getUTCMinutes(),
    ];
  return `${two(day)}-${MONTH_NAMES[month]}-${year} ${two(hour)}:${
    two(minute)
  } `;
}

/** The size column: `%19O`, or rounded to K, M, G as nginx rounds. */
function sizeText(e: AutoindexEntry, exact: boolean): string {
  if (exact) return e.dir ? `${" ".repeat(18)}-` : String(e.size).padStart(19);
  if (e.dir) return "      -";
  const scaled = (unit: number, letter: string) => {
    let n = Math.floor(e.size / unit);
    if (e.size % unit > unit / 2 - 1) n++;
    return `${String(n).padStart(6)}${letter}`;
  };
  const g = 1024 * 1024 * 1024;
  if (e.size > g - 1) return scaled(g, "G");
  if (e.size > 1024 * 1024 - 1) return scaled(1024 * 1024, "M");
  if (e.size > 9999) {
    let n = Math.floor(e.size / 1024);
    if (e.size % 1024 > 511) n++;
    return `${String(n).padStart(6)}K`;
  }
  return ` ${String(e.size).padStart(6)}`;
}

/** One `<a …>name</a>   date size` line (ngx_http_autoindex_html). */
function entryLine(e: AutoindexEntry, page: AutoindexPage): Uint8Array[] {
  const name = encoder.encode(e.name);
  const len = page.utf8 ? utf8Length(name) : name.length;
  const out: Uint8Array[] = [
    encoder.encode(
      `<a href="${escapeUriComponent(name)}${e.dir ? "/" : ""}">`,
    ),
  ];
  const long = len > NAME_LEN;
  const shown = page.utf8
    ? utf8Prefix(name, long ? NAME_LEN - 3 : NAME_LEN)
    : name.subarray(0, long ? NAME_LEN - 3 : NAME_LEN);
  out.push(escapeHtml(shown));
  if (long) {
    out.push(encoder.encode("..&gt;</a>"));
  } else {
    let width = len;
    let tail = "";
    if (e.dir && NAME_LEN - len > 0) {
      tail = "/";
      width++;
    }
    out.push(encoder.encode(`${tail}</a>${" ".repeat(NAME_LEN - width)}`));
  }
  out.push(
    encoder.encode(
      ` ${date(e.mtime, page.conf.localtime)}${
        sizeText(e, page.conf.exactSize)
      }\r\n`,
    ),
  );
  return out;
}

/** Byte order of UTF-8 names (`ngx_strcmp`), folders first. */
function compareEntries(a: AutoindexEntry, b: AutoindexEntry): number {
  if (a.dir !== b.dir) return a.dir ? -1 : 1;
  const x = encoder.encode(a.name);
  const y = encoder.encode(b.name);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! - y[i]!;
  }
  return x.length - y.length;
}

/**
 * The listing's bytes.
 *
 * @param page The URI, the entries, the settings and the charset.
 * @returns The HTML page.
 *
 * @example Usage
 * ```ts
 * import { autoindexHtml } from "./autoindex.ts";
 * import { match } from "node:assert/strict";
 *
 * const html = new TextDecoder().decode(autoindexHtml({
 *   uri: "/files/",
 *   entries: [{ name: "a b.txt", dir: false, mtime: 0, size: 3 }],
 *   conf: { exactSize: true, localtime: false },
 *   utf8: false,
 * }));
 * match(html, /<a href="a%20b\.txt">a b\.txt<\/a> +01-Jan-1970 00:00 +3\r\n/);
 * ```
 */
export function autoindexHtml(page: AutoindexPage): Uint8Array {
  const uri = new TextDecoder().decode(escapeHtml(encoder.encode(page.uri)));
  const parts: Uint8Array[] = [
    encoder.encode(
      `<html>\r\n<head><title>Index of ${uri}</title></head>\r\n<body>\r\n` +
        `<h1>Index of ${uri}</h1><hr><pre><a href="../">../</a>\r\n`,
    ),
  ];
  const sorted = [...page.entries].sort(compareEntries);
  for (const e of sorted) parts.push(...entryLine(e, page));
  parts.push(encoder.encode("</pre><hr></body>\r\n</html>\r\n"));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A lossy name that names nothing, not even a link to nothing. */
async function lost(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return false;
  } catch (error) {
    return error instanceof Deno.errors.NotFound;
  }
}

/** An entry whose `stat()` failed in a way that ends the listing (500). */
class EntryFailed extends Error {}

/**
 * A folder or entry nginx could not read: its line (the OS error follows
 * it); or an entry the gateway leaves out (`warn`, no OS error).
 */
export interface AutoindexFailure {
  level: "warn" | "error" | "crit";
  message: string;
  error: unknown;
}

/**
 * What Deno makes of a name that is not UTF-8 (Linux allows any bytes):
 * each byte that is not is U+FFFD, so the name is lost and the entry
 * cannot be read again by it. nginx lists such a name byte for byte (its
 * link escaped, its text raw); the gateway leaves it out, with a line
 * (README, autoindex).
 */
const LOSSY = "\ufffd";

/** What {@linkcode autoindexResponse} reads. */
export interface AutoindexRequest {
  /** The folder, absolute, with its trailing separator. */
  path: string;
  /** `$uri`. */
  uri: string;
  conf: AutoindexConf;
  /** The location's `charset` (`null` when off). */
  charset: string | null;
  head: boolean;
}

/**
 * Lists a folder as nginx's autoindex handler answers: 200, `text/html`,
 * the body streamed (nginx sends it chunked), or the error nginx answers
 * when the folder cannot be opened, with its line.
 *
 * @param req The folder, the URI, the settings.
 * @returns The response and, when nginx logs one, the line.
 */
export async function autoindexResponse(
  req: AutoindexRequest,
): Promise<{ response: Response; failures: AutoindexFailure[] }> {
  const entries: AutoindexEntry[] = [];
  const failures: AutoindexFailure[] = [];
  const folder = req.path.length > 1 && /[/\\]$/.test(req.path)
    ? req.path.slice(0, -1)
    : req.path;
  try {
    for await (const e of Deno.readDir(folder)) {
      if (e.name.startsWith(".")) continue;
      const full = `${folder}/${e.name}`;
      let info: Deno.FileInfo;
      try {
        info = await Deno.stat(full);
      } catch (error) {
        if (
          error instanceof Deno.errors.NotFound && e.name.includes(LOSSY) &&
          await lost(full)
        ) {
          failures.push({
            level: "warn",
            message:
              `"${full}" is not listed: its name is not UTF-8, which the gateway cannot read back`,
            error: null,
          });
          continue;
        }
        if (!(error instanceof Deno.errors.NotFound)) {
          // ngx_http_autoindex_handler: [crit], then an entry it may not
          // read is left out and any other failure ends the listing.
          failures.push({
            level: "crit",
            message: `stat() "${full}" failed`,
            error,
          });
          if (error instanceof Deno.errors.PermissionDenied) continue;
          throw new EntryFailed();
        }
        // A link to nothing is listed as the link (ngx_de_link_info).
        try {
          info = await Deno.lstat(full);
        } catch (error) {
          failures.push({
            level: "crit",
            message: `lstat() "${full}" failed`,
            error,
          });
          throw new EntryFailed();
        }
      }
      entries.push({
        name: e.name,
        dir: info.isDirectory,
        mtime: Math.floor((info.mtime?.getTime() ?? 0) / 1000),
        size: info.size,
      });
    }
  } catch (error) {
    if (error instanceof EntryFailed) {
      return {
        response: errorResponse(500, { head: req.head }),
        failures,
      };
    }
    const code = error instanceof Deno.errors.NotFound
      ? 404
      : error instanceof Deno.errors.PermissionDenied
      ? 403
      : 500;
    return {
      response: errorResponse(code, { head: req.head }),
      failures: [{
        level: code === 500 ? "crit" : "error",
        message: `opendir() "${folder}" failed`,
        error,
      }],
    };
  }
  const utf8 = req.charset?.toLowerCase() === "utf-8";
  const body = autoindexHtml({ uri: req.uri, entries, conf: req.conf, utf8 });
  const headers = { "content-type": "text/html" };
  // A stream, so the body goes chunked as nginx sends it (and a HEAD
  // answer names no length).
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(body);
      controller.close();
    },
  });
  return {
    response: makeResponse(stream, { status: 200, headers }),
    failures,
  };
}
