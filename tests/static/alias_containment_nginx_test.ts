/**
 * What a location's `root` or `alias` with variables keeps its files in,
 * beside nginx 1.22 (which follows every link and `..` a variable brings),
 * with the gateway run as a process with the run flags (`deno run` with
 * `GATEWAY_FLAGS`, the .exe's permissions, so the `settled` witness): the
 * folder its text names before its first variable, whatever variable that
 * is (a numbered or named capture, a `set` variable), and a link's
 * containment decided for the request's own folder, whatever was served
 * before through another location. Each side serves its own prefix `$D`;
 * the paths are relative to it.
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  bothSides,
  bothSidesAhead,
  logLines,
  PROCESS,
  TEMP,
} from "../_same_conf.ts";
import { rawRequest, waitFor } from "../_utils.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/** A side's files: `html/` the root; `private/`, `w/` and `secret.txt` beside it. */
function prepare(prefix: string): void {
  const files: [string, string][] = [
    ["html/index.html", "INDEX\n"],
    ["secret.txt", "SECRET\n"],
    ["private/p.txt", "PRIVATE\n"],
    ["w/f.txt", "WF\n"],
    ["w/x/f.txt", "WXF\n"],
    ["w/img_a.png", "IMG\n"],
  ];
  for (const [name, text] of files) {
    const path = join(prefix, name);
    Deno.mkdirSync(join(path, ".."), { recursive: true });
    Deno.writeTextFileSync(path, text);
  }
  Deno.symlinkSync("../private", join(prefix, "html", "lnk"));
  Deno.symlinkSync("../private", join(prefix, "w", "lnk"));
}

bothSidesAhead(prepare);

const conf = (port: number) =>
  `${PROCESS}error_log logs/error.log error;
events {}
http {
${TEMP}
  access_log logs/access.log;
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    root html;
    location /priv/ { alias html/../private/; }
    location /pl/ { alias html/lnk/; }
    location ~ ^/n(?<p>.*)$ { alias w/$p; }
    location ~ ^/q(?<p>.*)$ { set $z $p; alias w/$z; }
    location ~ ^/m(.*)$ { alias w/$1; }
    location ~ ^/ek(/.*)$ { alias w$1; }
    location ~ ^/u/(\\w+)/(.*)$ { alias ./$1/x/$2; }
    location ~ ^/img/(.*)$ { alias w/img_$1; }
    location ~ ^/v/(.*)$ { set $site w; alias ./$site/$1; }
    location = /favicon.ico { alias w/img_a.png; }
    location /one { alias w/f.txt; }
    location = /lf.txt { alias html/lnk/p.txt; }
  }
}
`;

/** The gateway's line for a name that leads outside the folder. */
const LOOP = "(40: Too many levels of symbolic links)";

/**
 * [request, nginx's status and body, the gateway's, whether the gateway
 * logs its refusal]; in order: a row may depend on what an earlier one
 * served.
 */
const ROWS: [string, string, string, boolean][] = [
  // A capture that climbs out of the alias's folder (`/n..` is a name in
  // the URI, `../` once the alias is built).
  ["/n../secret.txt", "200 SECRET", "403", true],
  ["/q../secret.txt", "200 SECRET", "403", true],
  ["/m../secret.txt", "200 SECRET", "403", true],
  ["/n/f.txt", "200 WF", "200 WF", false],
  ["/q/f.txt", "200 WF", "200 WF", false],
  // A link inside the root to a folder another location serves: refused
  // before and after that location served the file.
  ["/lnk/p.txt", "200 PRIVATE", "403", true],
  ["/priv/p.txt", "200 PRIVATE", "200 PRIVATE", false],
  ["/lnk/p.txt", "200 PRIVATE", "403", true],
  // The very path `/lnk/p.txt` names, served (and cached) for a location
  // whose folder is the link itself, is no proof for the root's.
  ["/pl/p.txt", "200 PRIVATE", "200 PRIVATE", false],
  ["/lnk/p.txt", "200 PRIVATE", "403", true],
  // `alias $D/w$1`: the folder is $D/w, not $D.
  ["/ek/lnk/p.txt", "200 PRIVATE", "403", true],
  ["/ek/f.txt", "200 WF", "200 WF", false],
  // `alias $D/$1/x/$2`: the folder is $D.
  ["/u/w/f.txt", "200 WXF", "200 WXF", false],
  // A name begun in the text and ended by a capture: the text is the
  // folder, `$D/w/img_`, as an alias without variables is.
  ["/img/a.png", "200 IMG", "403", true],
  // A `set` variable of the configuration's own is a variable too: the
  // folder is $D.
  ["/v/f.txt", "200 WF", "200 WF", false],
  ["/v/lnk/p.txt", "200 PRIVATE", "200 PRIVATE", false],
  // An alias naming a file (favicon.ico, robots.txt): the file is its own
  // folder (it was 403 with the link line). Its whole path is the
  // configuration's, links too, as a root's own path is.
  ["/favicon.ico", "200 IMG", "200 IMG", false],
  ["/one", "200 WF", "200 WF", false],
  ["/lf.txt", "200 PRIVATE", "200 PRIVATE", false],
];

/** `200 BODY`, or the status alone. */
async function answer(port: number, uri: string): Promise<string> {
  const raw = await rawRequest(
    port,
    `GET ${uri} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
  );
  const status = raw.split(" ")[1] ?? "none";
  return status === "200"
    ? `200 ${raw.slice(raw.indexOf("\r\n\r\n") + 4).trim()}`
    : status;
}

Deno.test(
  "a root or alias with variables keeps its files in the folder its text names before them, whatever was served before, beside nginx 1.22",
  ON_LINUX,
  async (t) => {
    await using sides = await bothSides(conf, { prepare, process: true });
    const { nginx, gateway } = sides;
    for (const [uri, theirs, ours, logged] of ROWS) {
      await t.step(uri, async () => {
        const lines = {
          errors: logLines(gateway.prefix, "error.log").length,
          ours: logLines(gateway.prefix, "access.log").length,
          theirs: logLines(nginx.prefix, "access.log").length,
        };
        const got = [
          await answer(nginx.port, uri),
          await answer(gateway.port, uri),
        ];
        await waitFor(() =>
          logLines(gateway.prefix, "access.log").length > lines.ours &&
          logLines(nginx.prefix, "access.log").length > lines.theirs
        );
        const refusal = logLines(gateway.prefix, "error.log")
          .slice(lines.errors).some((l) => l.includes(LOOP));
        deepStrictEqual([uri, ...got, refusal], [uri, theirs, ours, logged]);
      });
    }
  },
);
