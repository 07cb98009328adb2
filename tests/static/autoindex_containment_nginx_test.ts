/**
 * `autoindex on` beside nginx 1.22 with links in the listed folders: a
 * folder or file whose name leads outside the root (a link to a folder or a
 * file, one below such a link, one with `..` in its target, one in a
 * subfolder) is refused by the gateway as its static files are, 403 and
 * one `[error]` line each, and left out of the listing that holds it
 * (nginx follows every link: the rows show what it gives away); a link
 * that stays inside the root is listed and served as nginx lists and
 * serves it, byte for byte.
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
import { maskErrorLine, rawRequest } from "../_utils.ts";

const ON_LINUX = { ignore: Deno.build.os !== "linux" };

/** The folders and links of a side's prefix: `out/` lies beside `html/`. */
function prepare(prefix: string): void {
  const ai = join(prefix, "html", "ai");
  const out = join(prefix, "out");
  Deno.mkdirSync(join(ai, "in", "deep"), { recursive: true });
  Deno.mkdirSync(join(out, "sub"), { recursive: true });
  Deno.writeTextFileSync(join(ai, "in", "a.txt"), "inside\n");
  Deno.writeTextFileSync(join(ai, "in", "deep", "b.txt"), "deeper\n");
  Deno.writeTextFileSync(join(out, "s.txt"), "secret, 22 bytes long\n");
  Deno.writeTextFileSync(join(out, "sub", "t.txt"), "secret too\n");
  const links: [string, string][] = [
    ["etc", out], // a folder outside
    ["pw", join(out, "s.txt")], // a file outside
    ["dotdot", "../../out"], // `..` in the target, leading out
    ["in/nested", "../../../out/sub"], // one in a subfolder, leading out
    ["inlink", "in"], // a folder inside
    ["alink", "in/a.txt"], // a file inside
    ["updown", "../ai/in/deep"], // `..` in the target, staying inside
    ["loop1", "loop2"], // two links in a loop: listed as links (ELOOP)
    ["loop2", "loop1"],
  ];
  for (const [name, target] of links) {
    Deno.symlinkSync(target, join(ai, name));
  }
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
    location /ai/ { autoindex on; }
  }
}
`;

/** Status and body (chunks joined) of one request. */
async function answer(
  port: number,
  method: string,
  target: string,
): Promise<{ status: string; body: string }> {
  const raw = await rawRequest(
    port,
    `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
  );
  const at = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, at);
  let body = raw.slice(at + 4);
  if (/\r\ntransfer-encoding: chunked/i.test(head)) {
    body = body.replace(/^[0-9a-f]+\r\n|\r\n[0-9a-f]+\r\n/g, "")
      .replace(/\r\n0\r\n\r\n$/, "");
  }
  return { status: head.split(" ")[1] ?? "none", body };
}

/** A listing's names, in its order. */
function names(body: string): string[] {
  return [...body.matchAll(/<a href="([^"]+)">/g)].map((m) => m[1]!);
}

/**
 * The rows: a request, and what the gateway answers when the name leads
 * outside the root (`null`: inside, answered as nginx answers it). The
 * refused ones name the call of the line: `opendir()` for a folder's
 * listing, `open()` for a file, as the gateway's other lines for them.
 */
const ROWS: [method: string, target: string, refused: string | null][] = [
  ["GET", "/ai/", null],
  ["GET", "/ai/in/", null],
  ["GET", "/ai/inlink/", null],
  ["GET", "/ai/updown/", null],
  ["GET", "/ai/inlink/deep/", null],
  ["GET", "/ai/alink", null],
  ["GET", "/ai/inlink/a.txt", null],
  ["GET", "/ai/updown/b.txt", null],
  ["GET", "/ai/etc/", 'opendir() "$HTML/ai/etc"'],
  ["HEAD", "/ai/etc/", 'opendir() "$HTML/ai/etc"'],
  ["GET", "/ai/etc/sub/", 'opendir() "$HTML/ai/etc/sub"'],
  ["GET", "/ai/dotdot/", 'opendir() "$HTML/ai/dotdot"'],
  ["GET", "/ai/in/nested/", 'opendir() "$HTML/ai/in/nested"'],
  ["GET", "/ai/pw", 'open() "$HTML/ai/pw"'],
  ["GET", "/ai/etc/s.txt", 'open() "$HTML/ai/etc/s.txt"'],
  ["GET", "/ai/in/nested/t.txt", 'open() "$HTML/ai/in/nested/t.txt"'],
];

/** The names that lead outside, left out of the gateway's listings. */
const OUTSIDE_NAMES = new Set(["etc/", "pw", "dotdot/", "nested/"]);

Deno.test(
  "autoindex and files through links: what leads outside the root is refused and not listed, links inside as nginx 1.22",
  ON_LINUX,
  async () => {
    await using sides = await bothSides(conf, { prepare });
    const html = join(sides.gateway.prefix, "html");
    const wantLines: string[] = [];
    for (const [method, target, refused] of ROWS) {
      const row = `${method} ${target}`;
      const ng = await answer(sides.nginx.port, method, target);
      const gw = await answer(sides.gateway.port, method, target);
      // nginx follows every link: the setup is real.
      deepStrictEqual(ng.status, "200", `nginx ${row}`);
      if (refused === null) {
        const listed = names(ng.body);
        deepStrictEqual(
          {
            status: gw.status,
            body: gw.body,
          },
          {
            status: ng.status,
            // The same listing without the names that lead outside.
            body: listed.some((n) => OUTSIDE_NAMES.has(n))
              ? ng.body.split("\r\n").filter((l) =>
                !OUTSIDE_NAMES.has(l.match(/^<a href="([^"]+)">/)?.[1] ?? "")
              ).join("\r\n")
              : ng.body,
          },
          row,
        );
        continue;
      }
      deepStrictEqual(gw.status, "403", row);
      deepStrictEqual(/secret|s\.txt|t\.txt|sub\//.test(gw.body), false, row);
      wantLines.push(
        `TIME [error] PID#TID: *N ${
          refused.replace("$HTML", html)
        } failed (40: Too many levels of symbolic links), client: 127.0.0.1, server: localhost, request: "${method} ${target} HTTP/1.1", host: "localhost"`,
      );
    }
    // The root's listing shows what it must, and what it must not.
    const root = await answer(sides.gateway.port, "GET", "/ai/");
    deepStrictEqual(names(root.body), [
      "../",
      "in/",
      "inlink/",
      "updown/",
      "alink",
      "loop1",
      "loop2",
    ]);
    deepStrictEqual(logLines(sides.nginx.prefix, "error.log"), []);
    deepStrictEqual(
      logLines(sides.gateway.prefix, "error.log").map(maskErrorLine),
      wantLines,
    );
  },
);
