/**
 * nginx 1.22 and the gateway run from the same nginx.conf text (the
 * gateway's from its own prefix, both serving the same files), and one
 * request sent to both: the answer and the lines each wrote for it. The
 * gateway starts in this process through `main()`'s start (`startMain`):
 * what is compared is its answers and lines, which a process of its own
 * (about 0.3 s of CPU to start) does not change.
 */
import { dirname, join } from "node:path";
import { htmlAhead, startNginxSite } from "../_nginx.ts";
import {
  maskAccessLine,
  maskErrorLine,
  rawRequest,
  waitFor,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";
import { type NginxPrefix, nginxPrefix } from "../_prefix.ts";

/** What one side answered and logged for one request. */
export interface Observed {
  /** The status line without its reason phrase (Deno writes its own). */
  status: string;
  /** The fields compared, lower case name: value, sorted. */
  fields: string[];
  /** The body, with the server's name masked. */
  body: string;
  /** Error-log lines written for it (masked; nginx's start-up lines left out). */
  errors: string[];
  /** Access-log lines written for it (time and body bytes masked). */
  access: string[];
}

/** Both sides. */
export interface SideBySide extends AsyncDisposable {
  /** The gateway's port. */
  port: number;
  /** nginx's port. */
  nginxPort: number;
  /** The gateway's prefix (logs below `logs/`). */
  prefix: string;
  /**
   * Sends a request to both and waits for each side's access line in
   * `wait` (a file in `$LOGS`; `access.log` unless given; `null` waits for
   * none: a request that logs nothing).
   */
  exchange(
    request: string,
    wait?: string | null,
  ): Promise<{ ours: Observed; theirs: Observed }>;
  /** The lines of a file in each side's `$LOGS`, time and bytes masked. */
  logLines(name: string): { ours: string[]; theirs: string[] };
  /** The gateway's error lines so far, masked. */
  ourErrors(): string[];
  /** Writes a file beside each side's nginx.conf (where relative paths start). */
  writeConfFile(name: string, text: string): Promise<void>;
}

/**
 * Fields worth comparing: the rest (Date, Server, ETag, and Content-Length
 * of nginx's pages, which name the server) differ by design.
 */
const FIELDS = [
  "www-authenticate",
  "content-type",
  "location",
  "x-added",
];

function read(path: string): string[] {
  try {
    return Deno.readTextFileSync(path).split("\n").filter((l) => l !== "");
  } catch {
    return [];
  }
}

function observe(
  raw: string,
  logs: { errors: string[]; access: string[]; confDir: string },
): Observed {
  const { errors, access, confDir } = logs;
  const [head = "", ...rest] = raw.split("\r\n\r\n");
  const [status = "", ...lines] = head.split("\r\n");
  const fields = lines.map((l) => {
    const colon = l.indexOf(":");
    return `${l.slice(0, colon).toLowerCase()}: ${l.slice(colon + 1).trim()}`;
  }).filter((l) => FIELDS.includes(l.slice(0, l.indexOf(":")))).sort();
  return {
    status: status.split(" ").slice(0, 2).join(" "),
    fields,
    body: rest.join("\r\n\r\n").replace(
      /<hr><center>[^<]*<\/center>/,
      "<hr><center>SERVER</center>",
    ),
    errors: errors.filter((l) => /client: /.test(l)).map((l) =>
      maskErrorLine(l).replaceAll(confDir, "CONF")
    ),
    access: access.map(maskAccessLine),
  };
}

/**
 * Writes the folders of the sites a test file's {@linkcode startSideBySide}
 * calls will serve, when the file loads (`htmlAhead`: a folder written just
 * before a request waits for the gateway's settle proof).
 *
 * @param files Each site's files, as `startSideBySide` will be given them.
 */
export function sideBySideAhead(
  files: readonly (Record<string, string> | undefined)[],
): void {
  htmlAhead(files.map(withLogs));
}

/** A site's files and the logs folder beside them. */
function withLogs(
  files: Record<string, string> | undefined,
): Record<string, string> {
  // Writing a file there makes the folder before nginx opens its logs.
  return { ...files, "../logs/.keep": "" };
}

/**
 * Starts nginx and the gateway on one configuration.
 *
 * @param site `http` lines and the `server {}` contents (`$HTML` is the
 * files' folder; in the server block, `$LOGS` is a folder of each side's
 * own for log files), and
 * files to write there.
 */
export async function startSideBySide(site: {
  http?: string[];
  server: string;
  files?: Record<string, string>;
}): Promise<SideBySide> {
  const nginx = await startNginxSite({
    ...site,
    server: site.server.replaceAll("$LOGS", "$HTML/../logs"),
    files: withLogs(site.files),
  });
  const nginxConfDir = dirname(nginx.root);
  const nginxLogs = join(nginxConfDir, "logs");
  let folder: NginxPrefix | undefined;
  let gateway;
  try {
    folder = await nginxPrefix(
      (prefix) =>
        `events {}\nhttp {\n error_log ${prefix}/logs/error.log info;\n access_log ${prefix}/logs/access.log combined;\n${
          (site.http ?? []).join("\n")
        }\n server {\n listen 127.0.0.1:0;\n server_name localhost;\n${
          site.server.replaceAll("$HTML", nginx.root).replaceAll(
            "$LOGS",
            join(prefix, "logs"),
          )
        }\n }\n}\n`,
      { name: "access-gw-" },
    );
    gateway = await startMain(["--nginx-conf", folder.conf]);
  } catch (error) {
    await nginx[Symbol.asyncDispose]();
    await folder?.[Symbol.asyncDispose]();
    throw error;
  }
  const dir = folder;
  const { prefix } = dir;
  const errorLog = join(prefix, "logs", "error.log");
  const accessLog = join(prefix, "logs", "access.log");
  const gw = gateway;
  return {
    port: gw.port,
    nginxPort: nginx.port,
    prefix,
    ourErrors: () => read(errorLog).map(maskErrorLine),
    async writeConfFile(name, text) {
      await Deno.writeTextFile(join(nginxConfDir, name), text);
      await Deno.writeTextFile(join(prefix, "conf", name), text);
    },
    logLines(name) {
      return {
        ours: read(join(prefix, "logs", name)).map(maskAccessLine),
        theirs: read(join(nginxLogs, name)).map(maskAccessLine),
      };
    },
    async exchange(request, wait = "access.log") {
      const ourWait = wait === null ? null : join(prefix, "logs", wait);
      // nginx's own access.log is beside its nginx.conf (startNginxSite).
      const theirWait = wait === null
        ? null
        : wait === "access.log"
        ? join(nginxConfDir, "access.log")
        : join(nginxLogs, wait);
      const before = {
        ourErrors: read(errorLog).length,
        ourAccess: read(accessLog).length,
        theirErrors: nginx.errorLines().length,
        theirAccess: nginx.accessLines().length,
        ourWait: ourWait === null ? 0 : read(ourWait).length,
        theirWait: theirWait === null ? 0 : read(theirWait).length,
      };
      const theirs = await rawRequest(nginx.port, request);
      const ours = await rawRequest(gw.port, request);
      if (ourWait !== null && theirWait !== null) {
        await waitFor(() => read(ourWait).length > before.ourWait);
        await waitFor(() => read(theirWait).length > before.theirWait);
      }
      return {
        ours: observe(ours, {
          errors: read(errorLog).slice(before.ourErrors),
          access: read(accessLog).slice(before.ourAccess),
          confDir: join(prefix, "conf"),
        }),
        theirs: observe(theirs, {
          errors: nginx.errorLines().slice(before.theirErrors),
          access: nginx.accessLines().slice(before.theirAccess),
          confDir: nginxConfDir,
        }),
      };
    },
    async [Symbol.asyncDispose]() {
      await gw[Symbol.asyncDispose]();
      await nginx[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** `Authorization: Basic` of a user and password. */
export function basic(user: string, password: string): string {
  return `Authorization: Basic ${btoa(`${user}:${password}`)}\r\n`;
}
