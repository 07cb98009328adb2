/**
 * A small request flow around `serveFile` for tests: the longest matching
 * prefix location, `root` or `alias`, and the index module for a URI
 * ending in `/` (`index.html`, else nginx's 404 or 403 line), over a real
 * socket, with nginx's error lines formatted from the failures.
 *
 * @module
 */

import { join } from "node:path";
import type { LocationConf } from "../../src/engine/mod.ts";
import { formatErrorLogLine } from "../../src/log/error_log.ts";
import {
  directoryIndexForbidden,
  fileKind,
  indexFailure,
  serveFile,
  StaticCache,
  type StaticResult,
} from "../../src/static/mod.ts";
import { errorResponse } from "../../src/response/mod.ts";
import type { OsFamily } from "../../src/runtime/mod.ts";
import { requestVars } from "../_location_conf.ts";

/** A prefix location. */
export interface FileLocation {
  /** The prefix (`/`, `/ex/`). */
  prefix: string;
  /** Its settings. */
  conf: LocationConf;
  /** `root` (the URI is appended) or `alias` (the URI's rest is appended). */
  folder: { root: string } | { alias: string };
  /** `gzip_vary on`. */
  gzipVary?: boolean;
}

/** The running server. */
export interface FileServer extends AsyncDisposable {
  /** Its port on 127.0.0.1. */
  port: number;
  /** The error lines nginx would have written, in order. */
  errorLines: string[];
}

/**
 * Starts the server.
 *
 * @param locations The locations.
 * @param options A cache (default on) and the platform's rules.
 * @returns The server.
 */
export function startFileServer(
  locations: FileLocation[],
  options: { cache?: boolean; family?: OsFamily } = {},
): FileServer {
  const cache = options.cache === false ? undefined : new StaticCache();
  const errorLines: string[] = [];
  let connection = 0;
  const sorted = [...locations].sort((a, b) =>
    b.prefix.length - a.prefix.length
  );
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const url = new URL(req.url);
      const uri = decodeURIComponent(url.pathname);
      const location = sorted.find((l) => uri.startsWith(l.prefix))!;
      const folder = "root" in location.folder
        ? location.folder.root
        : location.folder.alias;
      const rest = "root" in location.folder
        ? uri
        : uri.slice(location.prefix.length);
      const vars = requestVars(req, { serverPort: server.addr.port });
      const serve = (path: string, fileUri: string): StaticResult =>
        serveFile(req, {
          path,
          root: folder,
          conf: location.conf,
          uri: fileUri,
          vars,
          ...(location.gzipVary ? { gzipVary: true } : {}),
          ...(cache ? { cache } : {}),
          ...(options.family ? { family: options.family } : {}),
        });
      // Containment waits for a folder written a moment ago, as the
      // gateway's request flow does (static/settled_proof.ts).
      const settled = async (
        path: string,
        fileUri: string,
      ): Promise<StaticResult> => {
        let r = serve(path, fileUri);
        for (let waited = 0; r.retryInMs !== undefined && waited < 2500;) {
          const ms = r.retryInMs;
          await r.response.body?.cancel();
          await new Promise((done) => setTimeout(done, ms));
          waited += ms;
          r = serve(path, fileUri);
        }
        return r;
      };
      let result: StaticResult;
      const path = join(folder, rest);
      if (uri.endsWith("/")) {
        const index = `${folder}${rest}index.html`;
        const kind = fileKind(index);
        if (kind === "file") {
          result = await settled(index, `${uri}index.html`);
        } else if (fileKind(`${folder}${rest}`) === "directory") {
          result = directoryIndexForbidden(`${folder}${rest}`, false);
        } else {
          let error: unknown = null;
          try {
            await Deno.stat(index);
          } catch (e) {
            error = e;
          }
          const { status, failure } = indexFailure(index, error, {
            logNotFound: location.conf.logNotFound,
          });
          result = {
            response: errorResponse(status),
            ...(failure ? { failure } : {}),
          };
        }
      } else {
        result = await settled(path, uri);
      }
      connection++;
      if (result.failure) {
        errorLines.push(formatErrorLogLine({
          time: new Date(),
          level: result.failure.level,
          pid: Deno.pid,
          tid: Deno.pid,
          connection,
          message: result.failure.message,
          ...(result.failure.osError
            ? { osError: result.failure.osError }
            : {}),
          client: "127.0.0.1",
          server: "localhost",
          request: `${req.method} ${url.pathname}${url.search} HTTP/1.1`,
          ...(req.headers.has("host")
            ? { host: req.headers.get("host")! }
            : {}),
        }));
      }
      return result.response;
    },
  );
  return {
    port: server.addr.port,
    errorLines,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** A response as read from the socket. */
export interface Exchange {
  /** The status code. */
  status: number;
  /** The fields, names in lower case, in order. */
  headers: [string, string][];
  /** The body's bytes. */
  body: Uint8Array;
}

/**
 * Sends one request on a new connection (`Connection: close` is added) and
 * reads the response to the end.
 *
 * @param port The server.
 * @param head The request line and fields, without the final blank line.
 * @returns The response.
 */
export async function exchange(port: number, head: string): Promise<Exchange> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  // A server that never closes fails the read instead of hanging the test.
  const timer = setTimeout(() => conn.close(), 5000);
  const chunks: Uint8Array[] = [];
  try {
    await conn.write(
      new TextEncoder().encode(`${head}\r\nConnection: close\r\n\r\n`),
    );
    const buf = new Uint8Array(64 * 1024);
    for (let i = 0; i < 10_000; i++) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    conn.close();
  } finally {
    clearTimeout(timer);
  }
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  // One char per byte (TextDecoder's "latin1" is windows-1252).
  let text = "";
  for (let i = 0; i < all.length; i += 4096) {
    text += String.fromCharCode(...all.subarray(i, i + 4096));
  }
  const end = text.indexOf("\r\n\r\n");
  const [statusLine = "", ...fields] = text.slice(0, end).split("\r\n");
  return {
    status: Number(statusLine.slice(9, 12)),
    headers: fields.map((f) => {
      const colon = f.indexOf(":");
      return [f.slice(0, colon).toLowerCase(), f.slice(colon + 1).trim()];
    }),
    body: all.subarray(end + 4),
  };
}
