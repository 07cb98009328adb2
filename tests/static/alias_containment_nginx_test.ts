/**
 * What a location's `root` or `alias` with variables keeps its files in,
 * beside nginx 1.22 (which follows every link and `..` a variable brings):
 * the folder its text names before its first variable, whatever variable
 * that is (a numbered or named capture, a `set` variable), and a link's
 * containment decided for the request's own folder, whatever was served
 * before through another location. `$D` below is the folder `html/` is in.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { sideBySideAhead, startSideBySide } from "../access/_side_by_side.ts";
import type { HtmlFiles } from "../_nginx.ts";
import { CONTAINMENT_WITNESS } from "../../src/static/containment.ts";

const SERVER = `root $HTML;
location /priv/ { alias $HTML/../private/; }
location /pl/ { alias $HTML/lnk/; }
location ~ ^/n(?<p>.*)$ { alias $HTML/../w/$p; }
location ~ ^/q(?<p>.*)$ { set $z $p; alias $HTML/../w/$z; }
location ~ ^/m(.*)$ { alias $HTML/../w/$1; }
location ~ ^/ek(/.*)$ { alias $HTML/../w$1; }
location ~ ^/u/(\\w+)/(.*)$ { alias $HTML/../$1/x/$2; }
location ~ ^/img/(.*)$ { alias $HTML/../w/img_$1; }
location ~ ^/v/(.*)$ { set $site w; alias $HTML/../$site/$1; }
`;

const FILES: HtmlFiles = {
  "index.html": "INDEX\n",
  "lnk": { symlink: "../private" },
  "../secret.txt": "SECRET\n",
  "../private/p.txt": "PRIVATE\n",
  "../w/f.txt": "WF\n",
  "../w/x/f.txt": "WXF\n",
  "../w/img_a.png": "IMG\n",
  "../w/lnk": { symlink: "../private" },
};
sideBySideAhead([FILES]);

const LOOP = "(40: Too many levels of symbolic links)";

Deno.test("a root or alias with variables keeps its files in the folder its text names before them, beside nginx 1.22", async (t) => {
  // The gateway's own witness (what the .exe's permissions leave): the
  // tests run without --allow-all, so /proc/self/fd is refused.
  strictEqual(CONTAINMENT_WITNESS, "settled");
  await using both = await startSideBySide({ server: SERVER, files: FILES });
  // [request, nginx's status and body, the gateway's, whether the
  // gateway's refusal line is logged]; in order: a row may depend on what
  // an earlier one served.
  const rows: [string, string, string, boolean][] = [
    // A capture that climbs out of the alias's folder (`/n..` is a name
    // in the URI, `../` once the alias is built).
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
    ["/priv/p.txt", "200 PRIVATE", "200 PRIVATE", false],
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
    // A `set` variable of the configuration's own: the folder is $D.
    ["/v/f.txt", "200 WF", "200 WF", false],
    ["/v/lnk/p.txt", "200 PRIVATE", "200 PRIVATE", false],
  ];
  for (const [uri, nginx, gateway, logged] of rows) {
    await t.step(uri, async () => {
      const { ours, theirs } = await both.exchange(
        `GET ${uri} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
      );
      const seen = (o: typeof ours) =>
        `${o.status.slice(9)}${
          o.status.endsWith("200") ? ` ${o.body.trim()}` : ""
        }`;
      deepStrictEqual(
        [
          uri,
          seen(theirs),
          seen(ours),
          ours.errors.some((l) => l.includes(LOOP)),
        ],
        [uri, nginx, gateway, logged],
      );
    });
  }
});
