/**
 * `autoindex on`'s answer (`ngx_http_autoindex_handler`): the folder read,
 * only once proved inside the location's folder by the proof files are
 * served by (`readInsideRoot`), each entry's `stat`, and nginx's status and
 * lines when the folder or an entry cannot be read; the page itself is
 * written by `autoindex.ts`.
 *
 * @module
 */

import { errorResponse, makeResponse } from "../response/mod.ts";
import {
  type AutoindexConf,
  type AutoindexEntry,
  autoindexHtml,
} from "./autoindex.ts";
import { readInsideRoot } from "./containment.ts";
import { MAX_SETTLE_WAIT_MS } from "./settled_proof.ts";
import { outsideRootError } from "./static_results.ts";

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
  /**
   * The folder the location serves (`root` or `alias`): the listed folder
   * and each entry that is a link must lie inside it, as a file served
   * must (`readInsideRoot`).
   */
  root: string;
  /** `$uri`. */
  uri: string;
  conf: AutoindexConf;
  /** The location's `charset` (`null` when off). */
  charset: string | null;
  head: boolean;
}

/** One name of the folder, read while the folder was proved inside. */
interface ReadEntry {
  name: string;
  /** A link (not followed). */
  link: boolean;
  /** Its `lstat`, or `null` when that failed. */
  lstat: Deno.FileInfo | null;
  /** Why the `lstat` failed. */
  error: unknown;
}

/**
 * The folder's names and their `lstat`s, read through the path the proof
 * hands over (`readInsideRoot`): nothing here follows a link, so what is
 * read lies in the proved folder.
 */
function readEntries(at: string): ReadEntry[] {
  const entries: ReadEntry[] = [];
  for (const e of Deno.readDirSync(at)) {
    if (e.name.startsWith(".")) continue;
    let lstat: Deno.FileInfo | null = null;
    let error: unknown = null;
    try {
      lstat = Deno.lstatSync(`${at}/${e.name}`);
    } catch (failed) {
      error = failed;
    }
    entries.push({ name: e.name, link: e.isSymlink, lstat, error });
  }
  return entries;
}

const NOTHING = () => undefined;

/** One try at the listing: done, or a folder on a path changed lately. */
type Listing =
  | { kind: "again"; ms: number }
  | { kind: "done"; response: Response; failures: AutoindexFailure[] };

/**
 * nginx's answer and line when `opendir()` failed (ngx_http_autoindex_handler);
 * `status` for a folder refused by containment.
 */
function opendirFailed(
  folder: string,
  error: unknown,
  head: boolean,
  status?: 403,
): Listing {
  const code = status ??
    (error instanceof Deno.errors.NotFound
      ? 404
      : error instanceof Deno.errors.PermissionDenied
      ? 403
      : 500);
  return {
    kind: "done",
    response: errorResponse(code, { head }),
    failures: [{
      level: code === 500 ? "crit" : "error",
      message: `opendir() "${folder}" failed`,
      error,
    }],
  };
}

/**
 * An entry whose `stat()` failed: nginx's `[crit]` line, and whether the
 * listing goes on without it (an entry it may not read) or ends in 500.
 */
function statFailed(
  full: string,
  error: unknown,
  failures: AutoindexFailure[],
): boolean {
  failures.push({ level: "crit", message: `stat() "${full}" failed`, error });
  return error instanceof Deno.errors.PermissionDenied;
}

/** The listing, made once (see {@linkcode autoindexResponse}). */
function listOnce(req: AutoindexRequest, folder: string): Listing {
  const { head } = req;
  const read = readInsideRoot(req.root, folder, readEntries);
  if (read.kind === "unsettled") return { kind: "again", ms: read.retryInMs };
  if (read.kind === "outside") {
    // Refused as a file there is (static_results.ts outsideRoot).
    return opendirFailed(folder, outsideRootError(), head, 403);
  }
  if (read.kind === "failed") return opendirFailed(folder, read.error, head);
  const entries: AutoindexEntry[] = [];
  const failures: AutoindexFailure[] = [];
  const ended = (): Listing => ({
    kind: "done",
    response: errorResponse(500, { head }),
    failures,
  });
  for (const e of read.value) {
    const full = `${folder}/${e.name}`;
    let info = e.lstat;
    if (info === null) {
      if (e.error instanceof Deno.errors.NotFound && e.name.includes(LOSSY)) {
        failures.push({
          level: "warn",
          message:
            `"${full}" is not listed: its name is not UTF-8, which the gateway cannot read back`,
          error: null,
        });
        continue;
      }
      if (e.error instanceof Deno.errors.NotFound) {
        // Gone since the folder was read: nginx's stat() and lstat() both
        // failed (ngx_de_info, ngx_de_link_info), which ends the listing.
        failures.push({
          level: "crit",
          message: `lstat() "${full}" failed`,
          error: e.error,
        });
        return ended();
      }
      // ngx_http_autoindex_handler: [crit], then an entry it may not read
      // is left out and any other failure ends the listing.
      if (statFailed(full, e.error, failures)) continue;
      return ended();
    }
    if (e.link) {
      // Listed only where the gateway would serve it: inside the root.
      const target = readInsideRoot(req.root, full, NOTHING);
      if (target.kind === "unsettled") {
        return { kind: "again", ms: target.retryInMs };
      }
      if (target.kind === "outside") continue;
      if (target.kind === "inside") {
        info = target.info;
      } else if (
        !(target.error instanceof Deno.errors.NotFound ||
          target.error instanceof Deno.errors.FilesystemLoop)
      ) {
        if (statFailed(full, target.error, failures)) continue;
        return ended();
      }
      // A link to nothing, or in a loop, is listed as the link
      // (ngx_http_autoindex_handler takes ENOENT and ELOOP to
      // ngx_de_link_info).
    }
    entries.push({
      name: e.name,
      dir: info.isDirectory,
      mtime: Math.floor((info.mtime?.getTime() ?? 0) / 1000),
      size: info.size,
    });
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
    kind: "done",
    response: makeResponse(stream, { status: 200, headers }),
    failures,
  };
}

/**
 * Lists a folder as nginx's autoindex handler answers: 200, `text/html`,
 * the body streamed (nginx sends it chunked), or the error nginx answers
 * when the folder cannot be opened, with its line. The folder is read only
 * once proved inside the location's folder, and an entry that is a link
 * only when what it names is (`readInsideRoot`, the proof files are served
 * by): a folder outside is refused as a file there is, 403 and
 * `opendir() "…" failed (40: Too many levels of symbolic links)`; an entry
 * leading outside is not listed. While a folder on the path has just
 * changed the listing waits, as a file's answer does, then answers 404.
 *
 * @param req The folder, its root, the URI, the settings.
 * @returns The response and, when nginx logs one, the line.
 */
export async function autoindexResponse(
  req: AutoindexRequest,
): Promise<{ response: Response; failures: AutoindexFailure[] }> {
  const folder = req.path.length > 1 && /[/\\]$/.test(req.path)
    ? req.path.slice(0, -1)
    : req.path;
  for (let waited = 0;;) {
    const listed = listOnce(req, folder);
    if (listed.kind === "done") return listed;
    if (waited >= MAX_SETTLE_WAIT_MS) {
      return { response: errorResponse(404, { head: req.head }), failures: [] };
    }
    await new Promise((resolve) => setTimeout(resolve, listed.ms));
    waited += listed.ms;
  }
}
