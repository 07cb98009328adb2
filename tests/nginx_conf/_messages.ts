/**
 * What `--check` says of a small nginx.conf, for the tables that try one
 * directive at every level nginx allows.
 */
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { compileHttp } from "../../src/nginx_conf/compile.ts";

/** What `--check` says of a file, its `events` warning and places left out. */
export function messages(text: string): string[] {
  const result = compileHttp(
    parseNginxConf("/n/conf/nginx.conf", {
      readTextFile: () => text,
      readDirFiles: () => [],
    }),
    { file: "/n/conf/nginx.conf", prefix: "/n", caseless: false },
  );
  return [...result.warnings, ...result.errors]
    .filter((m) => !m.startsWith('"events"'))
    .map((m) => m.replace(/ in \/n\/conf\/nginx.conf:\d+$/, ""));
}

/** A file with `line` at `level` beside a loopback http:// proxy_pass. */
export function fileWith(
  line: string,
  level: "http" | "server" | "location",
): string {
  const at = (l: typeof level) => l === level ? `${line}\n` : "";
  return `events {}\nhttp {\n${at("http")}server {\nlisten 80;\n${
    at("server")
  }location /api/ {\n${
    at("location")
  }proxy_pass http://127.0.0.1:8080/;\n}\n}\n}\n`;
}
