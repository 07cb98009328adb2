/**
 * nginx's request phases up to content (`ngx_http_core_module.c`): server
 * rewrite → find config → rewrite (`last` searches again, at most 10
 * times) → try_files → the content handler's choice (proxy, `return`, the
 * index module, static). The outcome is data the handler acts on; internal
 * redirects (`try_files`' last parameter, an index file, `error_page`) run
 * the phases again from find config with the new `$uri`.
 *
 * @module
 */

import { findLocation } from "./locations.ts";
import type { LocationConf, ServerConf } from "./model.ts";
import { type RewriteRun, runRewrite, setCaptures } from "./rewrite.ts";
import type { RequestVars } from "./variables.ts";
import { containmentRoot, mapUri } from "./uri_map.ts";
import { type DeclaredBody, tooLarge } from "./body_size.ts";
import { type OsFamily, refusedRequestPath } from "../runtime/mod.ts";

export { type DeclaredBody, mapUri };

/** What the phases decided. */
export type Content =
  | {
    /** `return`, or a rewrite's redirect. */
    kind: "return";
    conf: LocationConf;
    code: number;
    /** The body, or the Location for 301/302/303/307/308. */
    text: string | null;
  }
  | {
    /** Serve a file (or answer its absence) from a folder. */
    kind: "static";
    conf: LocationConf;
    /** The file, absolute. */
    path: string;
    /** The folder it must stay inside (`root` or `alias`). */
    root: string;
  }
  | {
    /** A folder with none of the index files: 403 and nginx's line. */
    kind: "index-forbidden";
    conf: LocationConf;
    /** The folder, absolute, with its trailing separator. */
    path: string;
    /** The folder it must stay inside (`root` or `alias`), for a listing. */
    root: string;
  }
  | {
    /** Forward upstream. */
    kind: "proxy";
    conf: LocationConf;
    /** A `rewrite` changed the URI in this location: it goes as it is. */
    rewritten: boolean;
  }
  | {
    /** `stub_status`: the counts page. */
    kind: "stub-status";
    conf: LocationConf;
  }
  | {
    /** A proxied prefix location's name without its slash: 301 to it. */
    kind: "slash";
    conf: LocationConf;
  }
  | {
    /** An answer nginx gives itself (`=404` of try_files, a cycle's 500). */
    kind: "status";
    conf: LocationConf;
    code: number;
    /** An error line to write, when nginx writes one. */
    message?: string;
    /** Response fields to send with it (`WWW-Authenticate` of a 401). */
    headers?: [string, string][];
    /** A file the index module did not find: `"…" is not found (2: …)`. */
    notFound?: string;
    /**
     * A part of {@linkcode notFound}'s folder is a file, not a folder: the
     * open failed with `ENOTDIR` (`20: Not a directory`), not `ENOENT`.
     */
    notADirectory?: boolean;
  };

/**
 * The preaccess and access phases are due for a location (nginx runs them
 * after the rewrite phase of every location a request ends up in, before
 * try_files): the caller runs them, then `resume()` runs the rest of the
 * phases, or the caller finalizes with the refusal.
 */
export interface AccessStep {
  kind: "access";
  conf: LocationConf;
  /** try_files and the content handler's choice, as if access had not been asked. */
  resume(): PhaseOutcome;
}

/** What the phases decided, or the access check they wait for. */
export type PhaseOutcome = Content | AccessStep;

/**
 * Whether a location has preaccess or access handlers to run.
 *
 * @param conf The location.
 * @returns `true` when any of `allow`/`deny`, `auth_basic`, `limit_req`, `limit_conn` applies.
 */
export function hasAccessPhase(conf: LocationConf): boolean {
  return conf.accessRules !== null || conf.authBasic !== null ||
    conf.limitReq !== null || conf.limitConn !== null;
}

/**
 * What the phases read besides the request. Every path they test passes
 * {@linkcode refusedRequestPath} first (`fileTest`): a name nginx for
 * Windows refuses never reaches `fileKind`.
 */
export interface PhaseIo {
  /** Whose file names the OS opens (nginx for Windows refuses some). */
  family: OsFamily;
  /** What a path is: a file, a folder, or nothing. */
  fileKind(path: string): "file" | "dir" | null;
}

/**
 * A file test of the phases (`try_files`, `index`, `if (-f …)`): a name
 * nginx for Windows refuses is missing, as `ngx_win32_check_filename`'s
 * `ENOENT` makes it, and is never asked of the OS (a `stat` of `COM1` opens
 * the serial port).
 *
 * @param io The phases' file access.
 * @param path The path to test.
 * @param from Where the request's own part begins (the root's length).
 */
function fileTest(
  io: PhaseIo,
  path: string,
  from: number,
): "file" | "dir" | null {
  return refusedRequestPath(path, io.family, from) ? null : io.fileKind(path);
}

/** Where the phases start: a new request, or an internal redirect. */
export interface PhaseState {
  /** URI changes so far: internal redirects and searches again after a rewrite (nginx's `uri_changes`, at most 10). */
  cycles: number;
  /** The request was redirected internally (`internal` locations answer). */
  internal: boolean;
  /** Compare URIs with locations without regard to case (nginx for Windows). */
  caseless: boolean;
  /** The request's declared body; absent: none to check (a subrequest). */
  body?: DeclaredBody | undefined;
}

const MAX_CYCLES = 10;

/**
 * Whether an `error_page` may still redirect the request: nginx's special
 * response handler sends one only while `r->uri_changes` is not 0, so the
 * 500 of a redirection cycle is nginx's own page, with its one line.
 *
 * @param state The request's phase state.
 * @returns Whether URI changes are left.
 */
export function uriChangesLeft(state: PhaseState): boolean {
  return state.cycles <= MAX_CYCLES;
}

function redirectCycle(conf: LocationConf, target: string): Content {
  // ngx_http_named_location's words differ from ngx_http_internal_redirect's.
  const doing = target.startsWith("@")
    ? "redirect to named location"
    : "internally redirecting to";
  return {
    kind: "status",
    conf,
    code: 500,
    message: `rewrite or internal redirection cycle while ${doing} "${target}"`,
  };
}

/** A rewrite nginx cannot go on from: its 500 and line. */
function failed(conf: LocationConf, outcome: { message: string }): Content {
  return { kind: "status", conf, code: 500, message: outcome.message };
}

function cycle(conf: LocationConf, uri: string): Content {
  return {
    kind: "status",
    conf,
    code: 500,
    message: `rewrite or internal redirection cycle while processing "${uri}"`,
  };
}

/**
 * Runs the phases for a request (or an internal redirect of it).
 *
 * @param server The chosen server.
 * @param vars The request; `$uri`, `$args` and captures change as nginx changes them.
 * @param options The state so far and file access.
 * @returns What the content phase does, or the access check it waits for.
 */
export function runPhases(
  server: ServerConf,
  vars: RequestVars,
  options: { state: PhaseState; io: PhaseIo; named?: LocationConf },
): PhaseOutcome {
  const { state, io } = options;
  // Made for the first rewrite program: most requests run none.
  let run: RewriteRun | null = null;
  vars.location ??= server.conf;
  if (options.named === undefined && server.conf.rewrite) {
    // The server rewrite phase, for internal redirects too
    // (ngx_http_handler), not for a named location (ngx_http_named_location).
    run = rewriteRun(vars, io);
    const outcome = runRewrite(server.conf.rewrite, run);
    if (outcome.kind === "return") {
      return { ...outcome, conf: server.conf };
    }
    if (outcome.kind === "error") return failed(server.conf, outcome);
  }
  let conf: LocationConf = server.conf;
  let named = options.named;
  for (;;) {
    if (named !== undefined) {
      conf = named;
      named = undefined;
    } else {
      const found = findLocation(
        server.conf.locations,
        vars.uri,
        state.caseless,
      );
      conf = found.kind === "none" ? server.conf : found.conf;
      if (found.kind === "location" && found.captures !== null) {
        setCaptures(vars, found.captures);
      }
      // ngx_http_core_find_config_phase's order: `internal`, the body's
      // size, then the slash's redirect.
      if (conf.internal && !state.internal) {
        return { kind: "status", conf, code: 404 };
      }
      // ngx_http_update_location_config: the 413's line and the slash's
      // redirect are the location's (its error_log).
      vars.location = conf;
      const refused = tooLarge(conf, state.body);
      if (refused !== null) return refused;
      if (found.kind === "redirect") return { kind: "slash", conf };
    }
    vars.location = conf;
    if (run !== null) {
      run.uriChanged = false;
      run.rewritten = false;
      run.location = null;
    }
    // The server level's own program ran in the server rewrite phase.
    if (conf.rewrite !== null && conf !== server.conf) {
      run ??= rewriteRun(vars, io);
      const outcome = runRewrite(conf.rewrite, run);
      if (run.location !== null) conf = vars.location = run.location;
      if (outcome.kind === "return") {
        return { ...outcome, conf };
      }
      if (outcome.kind === "error") return failed(conf, outcome);
      if (
        outcome.kind === "last" || (outcome.kind === "next" && run.uriChanged)
      ) {
        // ngx_http_core_post_rewrite_phase: one of nginx's 10 URI changes.
        if (++state.cycles > MAX_CYCLES) return cycle(conf, vars.uri);
        continue;
      }
    }
    break;
  }
  const rest = { state, io, rewritten: run?.rewritten ?? false };
  if (hasAccessPhase(conf)) {
    const at = conf;
    return {
      kind: "access",
      conf,
      resume: () => content(server, at, vars, rest),
    };
  }
  return content(server, conf, vars, rest);
}

/** A rewrite program's view of the request, fresh. */
function rewriteRun(vars: RequestVars, io: PhaseIo): RewriteRun {
  return {
    vars,
    uriChanged: false,
    rewritten: false,
    location: null,
    fileKind: (p) => fileTest(io, p, p.includes("~") ? rootOf(vars, p) : 0),
  };
}

/**
 * How much of an `if (-f …)` value is the location's root: its short
 * names (`C:\PROGRA~1\…`) are the configuration's, not the request's.
 */
function rootOf(vars: RequestVars, path: string): number {
  if (vars.location === undefined) return 0;
  const { root } = mapUri(vars.location, vars);
  return path.startsWith(root) ? root.length : 0;
}

/**
 * The file a `try_files` name tests, and the `$uri` it becomes. Under a
 * prefix location's `alias` the name is relative to the alias when it
 * starts with the location's name, and the URI keeps that name in front
 * (ngx_http_core_try_files_phase).
 */
function tryName(
  conf: LocationConf,
  vars: RequestVars,
  name: string,
): { path: string; uri: string; from: number } {
  if (conf.alias === null || conf.regex !== null) {
    const { root, path } = mapUri(conf, vars, name);
    return { path, uri: name, from: root.length };
  }
  const rest = name.startsWith(conf.name) ? name.slice(conf.name.length) : name;
  const alias = conf.alias.evaluate(vars);
  return { path: alias + rest, uri: conf.name + rest, from: alias.length };
}

/** try_files, then the content handler's choice. */
function content(
  server: ServerConf,
  conf: LocationConf,
  vars: RequestVars,
  options: { state: PhaseState; io: PhaseIo; rewritten: boolean },
): PhaseOutcome {
  const { io, state } = options;
  if (conf.tryFiles !== null) {
    let hit = false;
    for (const file of conf.tryFiles.files) {
      // ngx_http_core_try_files: a name ending in "/" tests a folder and
      // is tried without its slash, so a folder found becomes `$uri`
      // without it (the static module then redirects to the slash).
      const folder = file.text.endsWith("/");
      let name = file.evaluate(vars);
      if (folder && name.endsWith("/")) name = name.slice(0, -1);
      const tried = tryName(conf, vars, name);
      const kind = fileTest(io, tried.path, tried.from);
      if (kind !== null && (kind === "dir") === folder) {
        vars.uri = tried.uri;
        hit = true;
        break;
      }
    }
    if (!hit) {
      const fallback = conf.tryFiles.fallback;
      if (fallback.kind === "code") {
        return { kind: "status", conf, code: fallback.code };
      }
      // ngx_http_try_files_handler splits the last name's own `?`: without
      // one, `$args` become empty (and are there, as `?` would make them).
      return internalRedirect(
        server,
        vars,
        fallback.uri.evaluate(vars),
        { state, io, from: conf, ownArgs: "empty" },
      );
    }
  }
  if (conf.stubStatus) return { kind: "stub-status", conf };
  // A FastCGI location's content is its pass, as a proxied one's
  // (the engine route hands it to `fastcgi/`).
  if (conf.proxyPass !== null || conf.fastcgi !== undefined) {
    return { kind: "proxy", conf, rewritten: options.rewritten };
  }
  const { root, path } = mapUri(conf, vars);
  // The index module takes GET, HEAD and POST only; any other method goes
  // on to the static module, which answers it 405 before it looks at the
  // URI (ngx_http_index_handler, ngx_http_static_handler).
  if (vars.uri.endsWith("/") && INDEX_METHODS.has(vars.method)) {
    // The index module: the first index file that exists is an internal
    // redirect to it; none, and the folder exists: 403.
    for (const index of conf.index) {
      const name = index.evaluate(vars);
      // ngx_http_index_handler: an absolute index is redirected to as it
      // is, untested; any other is opened to test it, and whatever opens
      // is redirected to (a folder too, and the folder itself for an empty
      // value: a redirect to the same URI, until the cycle's 500).
      if (
        name.startsWith("/") || fileTest(io, path + name, root.length) !== null
      ) {
        return internalRedirect(
          server,
          vars,
          name.startsWith("/") ? name : vars.uri + name,
          { state, io, from: conf },
        );
      }
    }
    if (fileTest(io, path, root.length) === "dir") {
      return {
        kind: "index-forbidden",
        conf,
        path,
        root: containmentRoot(conf, vars, root),
      };
    }
    // ngx_http_index_error: no such folder, with the error of the open of
    // its first index file.
    const first = conf.index[0]?.evaluate(vars) ?? "index.html";
    return {
      kind: "status",
      conf,
      code: 404,
      ...(conf.logNotFound
        ? {
          notFound: `${path}${first}`,
          ...(underFile(path, io, root.length) ? { notADirectory: true } : {}),
        }
        : {}),
    };
  }
  return {
    kind: "static",
    conf,
    path,
    root: containmentRoot(conf, vars, root),
  };
}

/** The methods `ngx_http_index_handler` serves. */
const INDEX_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST"]);

/**
 * An internal redirect (`ngx_http_internal_redirect`): a new `$uri` (and
 * `$args` after a `?`), or a named location, then the phases again.
 *
 * @param server The server.
 * @param vars The request.
 * @param target The URI or `@name`.
 * @param options The state and file access; `ownArgs`: the target's own `?`
 * part replaces `$args` rather than keeping them, and without one they are
 * `empty` (try_files, an error page with variables: ngx_http_split_args)
 * or `none` (a constant error page: its args parsed at load).
 * @returns What the content phase does, or the access check it waits for.
 */
export function internalRedirect(
  server: ServerConf,
  vars: RequestVars,
  target: string,
  options: {
    state: PhaseState;
    io: PhaseIo;
    from?: LocationConf;
    ownArgs?: "empty" | "none";
    /** The new `$args`, when `target` is a path already split from them. */
    args?: string;
  },
): PhaseOutcome {
  const { state, io } = options;
  // A refusal here is answered under the location redirecting (its
  // add_header and error_page), as nginx's finalize does.
  const from = options.from ?? server.conf;
  state.internal = true;
  if (target.startsWith("@")) {
    // ngx_http_named_location counts the change before it looks the name up.
    if (++state.cycles > MAX_CYCLES) return redirectCycle(from, target);
    const named = server.named.get(target);
    if (named === undefined) {
      return {
        kind: "status",
        conf: server.conf,
        code: 500,
        message: `could not find named location "${target}"`,
      };
    }
    return runPhases(server, vars, { state, io, named });
  }
  // ngx_http_internal_redirect: one of nginx's 10 URI changes.
  if (++state.cycles > MAX_CYCLES) return redirectCycle(from, target);
  const q = target.indexOf("?");
  if (options.args !== undefined) {
    vars.uri = target;
    vars.args = options.args;
    vars.argsSet = options.args !== "";
  } else if (q >= 0) {
    vars.uri = target.slice(0, q);
    vars.args = target.slice(q + 1);
    vars.argsSet = true;
  } else {
    vars.uri = target;
    if (options.ownArgs !== undefined) {
      vars.args = "";
      vars.argsSet = options.ownArgs === "empty";
    }
  }
  return runPhases(server, vars, { state, io });
}

/**
 * Whether a folder path runs through a file (`a.txt/` or `a.txt/b/`): an
 * open below it fails with `ENOTDIR`, not `ENOENT`. Looked at only for a
 * 404 whose line is written, up from the folder until a part exists.
 */
function underFile(folder: string, io: PhaseIo, from: number): boolean {
  let at = folder.replace(/[\\/]+$/, "");
  for (let i = 0; i < 64 && at.length > 0; i++) {
    const kind = fileTest(io, at, from);
    if (kind !== null) return kind === "file";
    const cut = Math.max(at.lastIndexOf("/"), at.lastIndexOf("\\"));
    if (cut <= 0) return false;
    at = at.slice(0, cut);
  }
  return false;
}
