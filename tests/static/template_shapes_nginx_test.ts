/**
 * One cached file served by locations whose answers differ in shape (etag
 * off, another type, an added field, HEAD, a range), in turns, beside
 * nginx 1.22 on the same nginx.conf: each answer has the fields of its own
 * location, whatever the one before it was cloned from (the cached file's
 * answer template, `static/answer_template.ts`).
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { rawRequest } from "../_utils.ts";
import { bothSides, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const ON_LINUX = suiteNeeds("static/template_shapes_nginx_test.ts", [
  "nginx",
]);

function conf(port: number, root: string): string {
  return `${PROCESS}error_log logs/error.log;
events {}
http {
${TEMP}
  access_log off;
  server {
    listen 127.0.0.1:${port};
    location /a/ { alias ${root}/; }
    location /b/ { alias ${root}/; etag off; }
    location /c/ { alias ${root}/; default_type text/html; types { } }
    location /d/ { alias ${root}/; add_header X-D d; }
  }
}
`;
}

/** The paths asked in turn, each location after each other. */
const ASKED: [string, string][] = [
  ["GET", "/a/f.txt"],
  ["GET", "/b/f.txt"],
  ["GET", "/a/f.txt"],
  ["GET", "/c/f.txt"],
  ["GET", "/d/f.txt"],
  ["HEAD", "/a/f.txt"],
  ["GET", "/a/f.txt"],
  ["GET", "/b/f.txt"],
  ["GET", "/d/f.txt"],
];

/** An answer's status line and field names (values of time and tag masked). */
function shape(raw: string): string {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).split("\r\n");
  return [
    head[0],
    // The gateway sends no Server field (server_tokens: README).
    ...head.slice(1).filter((l) => !/^server:/i.test(l)).map((l) => {
      const [name = "", ...rest] = l.split(": ");
      const lower = name.toLowerCase();
      if (["date", "last-modified", "etag"].includes(lower)) {
        return lower;
      }
      return `${lower}: ${rest.join(": ")}`;
    }).sort(),
  ].join(" | ");
}

Deno.test(
  "a cached file's answer has its own location's fields, in any order of locations, as nginx 1.22",
  ON_LINUX,
  async () => {
    const root = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(join(root, "f.txt"), "x".repeat(2048));
      await using both = await bothSides((port) => conf(port, root));
      const answers = async (port: number) => {
        const got: string[] = [];
        for (const [method, path] of ASKED) {
          got.push(
            shape(
              await rawRequest(
                port,
                `${method} ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
              ),
            ),
          );
        }
        return got;
      };
      const nginx = await answers(both.nginx.port);
      deepStrictEqual(await answers(both.gateway.port), nginx);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);
