/**
 * Every setting the flags and the JSON config write into the built-in
 * nginx.conf (`src/nginx_conf/built_in.ts`) comes back from the parser and
 * compiler exactly as the operator wrote it (`$`, quotes, backslashes,
 * `;`, braces, `#`, blanks, non-ASCII), or is refused by its parser with
 * the setting's name: a table over settings and hostile values, a gateway
 * over real sockets (a client's header never becomes the Cache-Control
 * sent; a folder and logs named with `$` are served and written), and
 * nginx reading the printed configuration with the same meaning.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  DEFAULT_SETTINGS,
  pathProblem,
  resolveConfig,
  type SettingsInput,
} from "../../src/config/mod.ts";
import { compileBuiltIn } from "../../src/nginx_conf/mod.ts";
import type { HttpConf } from "../../src/engine/mod.ts";
import { runStartup, startMain } from "../_in_process.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { nginxPrefix } from "../_prefix.ts";
import { PROCESS, runNginx, TEMP } from "../_same_conf.ts";
import { onFreePort, rawRequest, waitFor } from "../_utils.ts";

/** Values an operator may write, each with a character nginx's text reads. */
const HOSTILE = [
  "c$", // `$` before no name: nginx's "invalid variable name"
  "$uri", // a variable nginx would read for each request
  "${uri}x",
  "$1",
  "\\\\server\\c$\\app", // a Windows administrative share's folder
  'a"b',
  "a'b",
  "a\\b",
  "a\\tb", // `\t` in a quoted nginx string is a tab: here two characters
  "a;b",
  "a{b}c",
  "a#b",
  "a b",
  "a\tb",
  "é€",
];

/** A setting as the flags and the JSON config give it, and where the model holds it. */
interface SettingRow {
  /** The flag's name, as errors name it. */
  name: string;
  /** The text given for a hostile value. */
  text: (v: string) => string;
  /** The settings holding it. */
  input: (text: string) => SettingsInput;
  /** The value the compiled built-in configuration holds. */
  read: (conf: HttpConf) => string | null | undefined;
  /** Whether its parser refuses the text (else it must come back as written). */
  refused: (text: string) => boolean;
}

const cacheMap = (conf: HttpConf) => conf.maps.get("station_cache_control")!;
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;
const always = () => true;

const SETTINGS: SettingRow[] = [
  {
    name: "root",
    text: (v) => `/srv/${v}`,
    input: (root) => ({ root }),
    read: (conf) => conf.servers[0]!.conf.root.constant,
    // What the OS cannot take as a path (Windows: quotes, controls).
    refused: (text) => pathProblem(text) !== null,
  },
  {
    name: "access-log",
    text: (v) => `/srv/${v}.log`,
    input: (accessLog) => ({ accessLog }),
    read: (conf) => conf.accessLog.path,
    // What the OS cannot take as a path (Windows: quotes, controls).
    refused: (text) => pathProblem(text) !== null,
  },
  {
    name: "error-log",
    text: (v) => `/srv/${v}.log`,
    input: (errorLog) => ({ errorLog }),
    read: (conf) => conf.errorLog.path,
    // What the OS cannot take as a path (Windows: quotes, controls).
    refused: (text) => pathProblem(text) !== null,
  },
  ...([
    ["cache-html", "cacheHtml", (c: HttpConf) => cacheMap(c).regexes[0]!.value],
    [
      "cache-fingerprinted",
      "cacheFingerprinted",
      (c: HttpConf) => cacheMap(c).regexes[1]!.value,
    ],
    ["cache-other", "cacheOther", (c: HttpConf) => cacheMap(c).defaultValue],
  ] as const).map(([name, key, value]): SettingRow => ({
    name,
    text: (v) => `max-age=60, ${v}`,
    input: (text) => ({ [key]: text }),
    read: (conf) => value(conf).constant,
    // No Cache-Control directive is written with `$`: one is a variable
    // meant to be read, refused; control characters always were.
    refused: (text) => text.includes("$") || CONTROL.test(text),
  })),
  {
    name: "server-name",
    text: (v) => v,
    input: (serverName) => ({ serverName }),
    read: (conf) => conf.servers[0]!.serverName,
    // A pattern or `$hostname` to nginx's server_name; blanks and quotes
    // always were refused.
    refused: (text) => /^[~.]|[*$ \t\r\n"]/.test(text),
  },
  // Refused beyond URI and host characters: written as they are.
  ...(
    [
      ["status-path", (v: string) => `/${v}`, "statusPath"],
      ["error-page", (v: string) => `404 /${v}`, "errorPage"],
      ["api-prefix", (v: string) => `/${v}/`, "apiPrefix"],
      ["upstream-group", (v: string) => v, "upstreamGroup"],
      ["upstream", (v: string) => `http://${v}`, "upstream"],
      ["listen", (v: string) => `${v}:80`, "listen"],
    ] as const
  ).map(([name, text, key]): SettingRow => ({
    name,
    text,
    input: (t) => ({ [key]: t }),
    read: () => null,
    refused: always,
  })),
];

Deno.test("every setting the built-in configuration writes comes back as written, or is refused naming the setting", () => {
  const wrong: string[] = [];
  for (const row of SETTINGS) {
    for (const v of HOSTILE) {
      const text = row.text(v);
      const expected = row.refused(text) ? "refused" : text.trim();
      let got: string | null | undefined;
      try {
        const config = resolveConfig(
          DEFAULT_SETTINGS,
          row.input(text),
          "/opt/gw",
        );
        got = row.read(compileBuiltIn(config, { caseless: false }));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        got = message.startsWith(`Cannot parse ${row.name} "${text}": `)
          ? "refused"
          : message;
      }
      if (got !== expected) {
        wrong.push(`${row.name} ${JSON.stringify(text)}: ${got}`);
      }
    }
  }
  deepStrictEqual(wrong, []);
});

/**
 * A folder whose name holds what nginx's text reads, with the app's files
 * (on Windows without the quote and backslash its names cannot hold).
 */
const ROOT_NAME = Deno.build.os === "windows"
  ? "c$ 'q' ;{}#é"
  : 'c$ "q" \\x;{}#é';

/**
 * A station's folder: logs, and the same client app in `app` and in
 * {@linkcode ROOT_NAME}.
 */
function writeStation(): string {
  const dir = Deno.makeTempDirSync({ prefix: "built-in-literal-" });
  Deno.mkdirSync(join(dir, "logs"));
  for (const name of ["app", ROOT_NAME]) {
    const root = join(dir, name);
    Deno.mkdirSync(root);
    Deno.writeTextFileSync(join(root, "index.html"), "<p>app</p>");
    Deno.writeTextFileSync(join(root, "app.css"), "p{}");
    Deno.writeTextFileSync(join(root, "app.3f9a2c1b.js"), "1");
  }
  return dir;
}

// Written when the file loads: the gateway serves a folder once it has
// been still for a moment (tests/README.md, "settle").
const STATIONS = Array.from({ length: 3 }, writeStation);
globalThis.addEventListener("unload", () => {
  for (const dir of STATIONS) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Removed by its test.
    }
  }
});

/** A station written ahead, removed when disposed. */
function takeStation(): AsyncDisposable & { dir: string; root: string } {
  const dir = STATIONS.pop() ?? writeStation();
  return {
    dir,
    root: join(dir, ROOT_NAME),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** A request carrying the hostile fields, and the Cache-Control answered. */
async function cacheControl(port: number, path: string): Promise<string> {
  const raw = await rawRequest(
    port,
    `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX: evil, max-age=99999\r\n` +
      "Y: private\r\nConnection: close\r\n\r\n",
  );
  strictEqual(raw.split("\r\n")[0], "HTTP/1.1 200 OK", raw);
  // The field's bytes are the setting's UTF-8, as nginx sends its text.
  return /\r\ncache-control: ([^\r]*)\r\n/i.exec(raw)?.[1] ?? "(none)";
}

/** Each Cache-Control setting, with a file of its kind. */
const CACHE_FLAGS = [
  ["--cache-html", "cacheHtml", "/index.html", "cache-html"],
  [
    "--cache-fingerprinted",
    "cacheFingerprinted",
    "/app.3f9a2c1b.js",
    "cache-fingerprinted",
  ],
  ["--cache-other", "cacheOther", "/app.css", "cache-other"],
] as const;

/** Values that read a client's fields if taken as nginx text, and one that is text. */
const CACHE_VALUES = [
  { value: "$http_x", refused: true },
  { value: "max-age=${http_y}", refused: true },
  { value: "$http_x$http_y", refused: true },
  { value: 'private="Set-Cookie", a#b;c{d}\\e é', refused: false },
];

Deno.test("a client's request fields never become the Cache-Control sent: a setting with $ is refused, any other is sent as written (flags and config file)", async () => {
  await using s = takeStation();
  const wrong: string[] = [];
  for (const [flag, key, path, name] of CACHE_FLAGS) {
    for (const { value, refused } of CACHE_VALUES) {
      for (const via of ["flag", "file"] as const) {
        const config = join(s.dir, "config.json");
        await Deno.writeTextFile(config, JSON.stringify({ [key]: value }));
        const args = [
          "--listen",
          "127.0.0.1:0",
          "--root",
          join(s.dir, "app"),
          "--error-log",
          join(s.dir, "logs", "error.log"),
          "--access-log",
          "off",
          ...(via === "flag" ? [flag, value] : ["--config", config]),
        ];
        const where = `${flag} ${JSON.stringify(value)} (${via})`;
        let gw;
        try {
          gw = await startMain(args);
        } catch (error) {
          const message = String(error);
          const said =
            `Cannot parse ${name} "${value}": a Cache-Control value cannot hold "$"`;
          if (!refused) wrong.push(`${where}: refused: ${message}`);
          else if (!message.includes(said)) wrong.push(`${where}: ${message}`);
          else if (via === "file" && !message.includes(` in ${config}`)) {
            wrong.push(`${where}: the file is not named: ${message}`);
          }
          continue;
        }
        await using _gw = gw;
        const sent = await cacheControl(gw.port, path);
        if (refused || sent !== value) {
          wrong.push(`${where}: started, sent Cache-Control: ${sent}`);
        }
      }
    }
  }
  deepStrictEqual(wrong, []);
});

Deno.test("a client-app folder and log files named with $, quotes, backslashes and braces are served and written as named", async () => {
  await using s = takeStation();
  const accessLog = join(s.dir, "logs", "a$b ${x}.log");
  const errorLog = join(s.dir, "logs", "e$r.log");
  await using gw = await startMain([
    "--listen",
    "127.0.0.1:0",
    "--root",
    s.root,
    "--access-log",
    accessLog,
    "--error-log",
    errorLog,
  ]);
  const page = await rawRequest(
    gw.port,
    "GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
  );
  ok(page.startsWith("HTTP/1.1 200 OK\r\n"), page);
  ok(page.endsWith("\r\n\r\n<p>app</p>"), page);
  const missing = await rawRequest(
    gw.port,
    "GET /gone.css HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
  );
  ok(missing.startsWith("HTTP/1.1 404 Not Found\r\n"), missing);
  const read = (path: string) => {
    try {
      return Deno.readTextFileSync(path);
    } catch {
      return "";
    }
  };
  await waitFor(() => read(accessLog).split("\n").length > 2);
  match(read(accessLog), /"GET \/index\.html HTTP\/1\.1" 200 /);
  await waitFor(() => read(errorLog).includes("gone.css"));
  // nginx's open() (CreateFile()) line names the folder as written, then
  // the URI.
  ok(read(errorLog).includes(`"${s.root}/gone.css" failed`), read(errorLog));
});

/**
 * The printed configuration as nginx 1.22 takes it: the gateway's own
 * directives (`station_*`, `$station_peer`) out, nginx's process, events
 * and temp folders in, and `fail_timeout` in seconds (nginx takes no
 * `ms` there; the built-in writes milliseconds, a difference of its own).
 */
function forNginx(printed: string): string {
  return PROCESS + "events {}\n" + printed
    .replace(/^\s*station_\w+ .*;\n/gm, "")
    .replaceAll("$station_peer", "$proxy_host")
    .replace(/fail_timeout=(\d+)000ms/g, "fail_timeout=$1s")
    .replace("http {\n", `http {\n${TEMP}\n`);
}

Deno.test({
  name:
    "a Windows administrative share's folder and log file are the client-app folder and access log as written",
  ignore: Deno.build.os !== "windows",
}, () => {
  const config = resolveConfig(DEFAULT_SETTINGS, {
    root: "\\\\server\\c$\\app",
    accessLog: "\\\\server\\c$\\logs\\access.log",
  }, "C:\\gw");
  const conf = compileBuiltIn(config, { caseless: true });
  deepStrictEqual([conf.servers[0]!.conf.root.constant, conf.accessLog.path], [
    "\\\\server\\c$\\app",
    "\\\\server\\c$\\logs\\access.log",
  ]);
});

Deno.test({
  name:
    "--print-config writes such settings as an nginx.conf nginx reads with the same meaning",
  ignore: Deno.build.os !== "linux",
}, async () => {
  await using s = takeStation();
  const cache = 'private="Set-Cookie", a#b;c{d}\\e é';
  const settings = (port: number, logs: string) => [
    "--listen",
    `127.0.0.1:${port}`,
    "--root",
    s.root,
    "--access-log",
    join(logs, "a$b.log"),
    "--error-log",
    join(logs, "e$r.log"),
    "--cache-other",
    cache,
    "--server-name",
    "station;{7}#",
  ];
  await using gw = await startMain(settings(0, join(s.dir, "logs")));
  await using p = await nginxPrefix("", {
    name: "built-in-literal-nginx-",
    dirs: ["conf", "logs", "temp"],
  });
  const logs = join(p.prefix, "logs");
  await using _nginx = await onFreePort(async (port) => {
    const printed = await runStartup([
      "--print-config",
      ...settings(port, logs),
    ]);
    strictEqual(printed.code, 0, printed.stderr);
    await Deno.writeTextFile(p.conf, forNginx(printed.stdout));
    // A pid file of its own: nginx -t writes one, and runNginx waits for
    // the running nginx's.
    const test = { ...p, pid: join(p.prefix, "test.pid") };
    strictEqual(await nginxTestOutput(test), "");
    return await runNginx(p.prefix, p.conf);
  });
  const port = Number(
    /listen 127\.0\.0\.1:(\d+);/.exec(
      await Deno.readTextFile(p.conf),
    )![1],
  );
  for (const path of ["/index.html", "/app.css", "/app.3f9a2c1b.js"]) {
    strictEqual(
      await cacheControl(port, path),
      await cacheControl(gw.port, path),
      path,
    );
  }
  strictEqual(await cacheControl(port, "/app.css"), cache);
  // nginx opens the access log named with `${station_dollar}` per request.
  await waitFor(() => {
    try {
      return Deno.readTextFileSync(join(logs, "a$b.log")).includes("app.css");
    } catch {
      return false;
    }
  });
});
