/**
 * Windows device names and the other names nginx for Windows refuses
 * (`ngx_win32_check_filename`) never reach the OS from any phase: the
 * phases' file tests (`try_files`, `index`, `if (-f …)`, `alias`,
 * `autoindex`, an `error_page`'s URI) and the static file. On Windows a
 * `stat` of `…\html\COM1` opens the serial port. The phases' file access
 * (`PhaseIo`) and the static module's `stat` (its cache) and opens (its
 * containment seam) record every path they are asked for; a refused name
 * must be in none, and the request ends as nginx for Windows ends it: a
 * missing file.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  type Content,
  type HttpConf,
  internalRedirect,
  type PhaseIo,
  type PhaseOutcome,
  type RequestVars,
  runPhases,
} from "../../src/engine/mod.ts";
import { serveFile, StaticCache } from "../../src/static/mod.ts";
import { compileText, describe, requestVars } from "./_conf.ts";
import { tempDir } from "../_prefix.ts";
import { join } from "node:path";

/** Names a client sends that nginx for Windows answers as missing. */
const REFUSED = [
  "COM1",
  "AUX",
  "CONIN$",
  "nul",
  "com1.txt",
  "LPT1",
  "COM1.",
  "COM1 ",
  "com1 .js",
  "clock$",
  "index.html::$DATA",
  "index.html.",
  "INDEX~1.HTM",
];

/** A `stat`'s kind, as the gateway's own `PhaseIo` reads it. */
function kindOnDisk(path: string): "file" | "dir" | null {
  try {
    const info = Deno.statSync(path);
    return info.isFile ? "file" : info.isDirectory ? "dir" : null;
  } catch {
    return null;
  }
}

/** A cache whose every `stat` is recorded. */
class RecordingCache extends StaticCache {
  constructor(readonly asked: string[]) {
    super();
  }
  override stat(path: string, now?: number): Deno.FileInfo | null {
    this.asked.push(path);
    return super.stat(path, now);
  }
}

/** What a request came to, and every path asked of the file system. */
interface Run {
  /** The phases' decision, and the static module's status for a file. */
  outcome: string;
  /** Paths the phases tested, the static module stat'ed or opened. */
  asked: string[];
  /** The static module's error line, without its time and client. */
  line: string | null;
}

/**
 * The phases for a target (an `error_page` redirects after the first
 * answer), then the static module for a file, all on the Windows family.
 */
function run(
  conf: HttpConf,
  target: string,
  errorPage?: string,
): Run {
  const asked: string[] = [];
  const io: PhaseIo = {
    family: "windows",
    fileKind: (path) => {
      asked.push(path);
      return kindOnDisk(path);
    },
  };
  const server = conf.servers[0]!;
  const vars = requestVars(target);
  const state = { cycles: 0, internal: false, caseless: true };
  let outcome: PhaseOutcome = runPhases(server, vars, { state, io });
  if (errorPage !== undefined) {
    // The request flow's error page: an internal redirect to its URI.
    outcome = internalRedirect(server, vars, errorPage, { state, io });
  }
  for (let i = 0; outcome.kind === "access" && i < 5; i++) {
    outcome = outcome.resume();
  }
  const content = outcome as Content;
  if (content.kind !== "static") {
    return { outcome: describe(content), asked, line: null };
  }
  return { ...staticFile(content, vars, asked), asked };
}

/** The static module for the phases' file, its `stat`s and opens recorded. */
function staticFile(
  content: Extract<Content, { kind: "static" }>,
  vars: RequestVars,
  asked: string[],
): { outcome: string; line: string | null } {
  const result = serveFile(new Request("http://localhost/"), {
    path: content.path,
    root: content.root,
    conf: content.conf,
    uri: vars.uri,
    vars,
    cache: new RecordingCache(asked),
    family: "windows",
    containmentHook: (_step, path) => asked.push(path),
  });
  const failure = result.failure;
  return {
    outcome: `static ${result.response.status}`,
    line: failure === undefined
      ? null
      : `${failure.message} (${failure.osError?.code}: ${failure.osError?.text})`,
  };
}

/** A phase, the nginx.conf that runs it, and how a client's name reaches it. */
interface Phase {
  name: string;
  /** The `server {}`'s lines. */
  server: string;
  target(name: string): string;
  /** An error page's URI, redirected to after the first answer. */
  errorPage?(name: string): string;
  /** What nginx for Windows answers for a refused name. */
  want: string;
  /** Names this phase still asks of the OS: nginx refuses them too. */
  asks?: string[];
}

/**
 * The phases, serving the prefix's `html` (which holds `index.html` and
 * `app/`), the folder `html` as the compiled configuration names it.
 */
const phasesServing = (html: string): Phase[] => [
  {
    name: "try_files $uri $uri/ @app",
    server: `root html;
      location / { try_files $uri $uri/ @app; }
      location @app { return 200 app; }`,
    target: (n) => `/${n}`,
    // ngx_http_core_try_files_phase: each test fails as ENOENT, so the app.
    want: "return 200 app",
  },
  {
    name: "index",
    server: `root html; location / { index index.html; }`,
    target: (n) => `/${n}/`,
    want: "status 404",
  },
  {
    name: "index $arg_i",
    server: `root html; location / { index $arg_i index.html; }`,
    target: (n) => `/app/?i=${n}`,
    // The next index file is looked for; the folder has none.
    want: `403 ${html}/app/`,
  },
  {
    name: "if (-f $request_filename)",
    server: `root html;
      location / { if (-f $request_filename) { return 200 file; } return 404; }`,
    target: (n) => `/${n}`,
    want: "return 404",
  },
  {
    name: "if (-d $request_filename)",
    server: `root html;
      location / { if (-d $request_filename) { return 200 dir; } return 404; }`,
    target: (n) => `/${n}`,
    want: "return 404",
  },
  {
    name: "if (!-e $request_filename)",
    server: `root html;
      location / { if (!-e $request_filename) { return 404; } return 200 e; }`,
    target: (n) => `/${n}`,
    want: "return 404",
  },
  {
    name: "if (-x $request_filename)",
    server: `root html;
      location / { if (-x $request_filename) { return 200 x; } return 404; }`,
    target: (n) => `/${n}`,
    want: "return 404",
  },
  {
    name: "alias and try_files",
    server: `location /files/ { alias html/; try_files $uri =404; }`,
    target: (n) => `/files/${n}`,
    want: "status 404",
  },
  {
    name: "alias",
    server: `location /files/ { alias html/; }`,
    target: (n) => `/files/${n}`,
    want: "static 404",
  },
  {
    name: "autoindex",
    server: `root html; location / { autoindex on; }`,
    target: (n) => `/${n}/`,
    want: "status 404",
  },
  {
    name: "error_page",
    server: `root html; location / { }`,
    target: () => "/missing.html",
    errorPage: (n) => `/${n}`,
    want: "static 404",
  },
  {
    name: "static file",
    server: `root html; location / { }`,
    target: (n) => `/${n}`,
    want: "static 404",
  },
  {
    name: "root of variables",
    server: `root html/$arg_site; location / { }`,
    target: (n) => `/index.html?site=${n}`,
    want: "static 404",
    // A root's short names are taken as the configuration's (a station's
    // folder may be written `C:\PROGRA~1\…`), even where a variable made
    // them; nginx for Windows refuses them as any short name.
    asks: ["INDEX~1.HTM"],
  },
];

Deno.test("a name nginx for Windows refuses reaches no stat or open from any phase, and is answered as a missing file", async (t) => {
  await using prefix = await tempDir("gw-winnames-");
  const html = join(prefix.path, "html");
  await Deno.mkdir(join(html, "app"), { recursive: true });
  await Deno.writeTextFile(join(html, "index.html"), "index");
  for (const phase of phasesServing(html)) {
    const conf = compileText(
      `http { server { ${phase.server} } }`,
      true,
      prefix.path,
    );
    await t.step(phase.name, () => {
      // The control: an ordinary name is asked of the file system.
      const control = run(
        conf,
        phase.target("other.txt"),
        phase.errorPage?.("other.txt"),
      );
      strictEqual(
        control.asked.some((p) => p.includes("other.txt")),
        true,
        `${phase.name}: the recording sees an ordinary name`,
      );
      for (const name of REFUSED) {
        if (phase.asks?.includes(name)) continue;
        const { outcome, asked, line } = run(
          conf,
          phase.target(name),
          phase.errorPage?.(name),
        );
        deepStrictEqual(
          asked.filter((p) => p.includes(name)),
          [],
          `${phase.name} ${JSON.stringify(name)}`,
        );
        strictEqual(outcome, phase.want, `${phase.name} ${name}`);
        if (outcome === "static 404") {
          // ngx_http_static_handler's line for its ENOENT.
          strictEqual(line?.includes(name), true, `${phase.name}: ${line}`);
          strictEqual(
            line?.endsWith(
              "failed (2: The system cannot find the file specified)",
            ),
            true,
            `${phase.name} ${name}: ${line}`,
          );
        }
      }
    });
  }
});
