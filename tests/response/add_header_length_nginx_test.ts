/**
 * `add_header Content-Length …` beside nginx 1.22, as a CORS preflight
 * writes it (`add_header Content-Length 0; return 200;`): nginx sends its own
 * `Content-Length` and the added line; the runtime frames every body by its
 * own size and sends one line, so the gateway adds none (README,
 * add-header-length). What both must agree on is `$body_bytes_sent`, the
 * bytes that went out: the gateway counted the field, which the added line
 * had made `"0, 0"`, and logged `200 NaN` (or the added number, not the body).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { htmlAhead, startNginxSite } from "../_nginx.ts";
import { request } from "./_raw_exchange.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import {
  freePort,
  readHead,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";

const NEEDS = suiteNeeds("add_header_length_nginx_test.ts", ["nginx"]);

/** [case, request line, the body the client gets] */
const CASES: [string, string, string][] = [
  ["return 200 without text", "OPTIONS /r HTTP/1.1", ""],
  ["return 200 with text, another length added", "GET /t HTTP/1.1", "ok"],
  ["two lengths added", "GET /two HTTP/1.1", "ok"],
  ["a static file", "GET /f/a.txt HTTP/1.1", "hello\n"],
  ["a static file, HEAD", "HEAD /f/a.txt HTTP/1.1", ""],
  ["a proxied answer", "GET /p/x HTTP/1.1", "hello"],
  ["always, on a 201", "GET /c HTTP/1.1", "made"],
];

function server(root: string, upstream: number, log: string): string {
  return `
    access_log ${log} bytes;
    root ${root};
    location = /r { add_header Content-Length 0; return 200; }
    location = /t { add_header Content-Length 9; return 200 "ok"; }
    location = /two {
      add_header Content-Length 0;
      add_header Content-Length 7;
      return 200 "ok";
    }
    location /f/ { alias ${root}/; add_header Content-Length 1; }
    location /p/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      add_header Content-Length 0;
    }
    location = /c { add_header Content-Length 0 always; return 201 "made"; }
`;
}

const FILES = { "a.txt": "hello\n" };
htmlAhead([FILES]);

Deno.test({
  name:
    "add_header Content-Length: the access line counts the body sent, as nginx's",
  ...NEEDS,
  async fn() {
    await using up = startRawUpstream(async (conn) => {
      if (await readHead(conn) === null) return;
      await writeText(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
      );
    });
    const logs = await Deno.makeTempDir({ prefix: "add-length-logs-" });
    const format = `log_format bytes '$request $status $body_bytes_sent';`;
    try {
      await using nginx = await startNginxSite({
        http: [format],
        server: server("$HTML", up.port, join(logs, "nginx.log")),
        files: FILES,
      });
      await Deno.mkdir(join(logs, "logs"), { recursive: true });
      await Deno.mkdir(join(logs, "conf"), { recursive: true });
      const conf = join(logs, "conf", "gateway.conf");
      const port = freePort();
      await Deno.writeTextFile(
        conf,
        `events {}\nhttp {\n  error_log ${logs}/error.log;\n  ${format}\n  server {\n    listen 127.0.0.1:${port};\n    server_name localhost;\n${
          server(nginx.root, up.port, join(logs, "gateway.log"))
        }\n  }\n}\n`,
      );
      await using gw = await startMain(["--nginx-conf", conf]);
      for (const [what, line, body] of CASES) {
        const head = `${line}\r\nHost: localhost`;
        await request(nginx.port, head);
        const ours = await request(gw.port, head);
        strictEqual(ours.body, body, what);
        // One length, the body's own (a HEAD's: the file's).
        const lengths = ours.fields.filter((f) =>
          f.startsWith("content-length:")
        );
        const size = line.startsWith("HEAD") ? "6" : String(body.length);
        deepStrictEqual(lengths, [`content-length: ${size}`], what);
      }
      const logged = (file: string) =>
        Deno.readTextFileSync(file).trim().split("\n");
      await waitFor(() => {
        try {
          return logged(join(logs, "gateway.log")).length === CASES.length &&
            logged(join(logs, "nginx.log")).length === CASES.length;
        } catch {
          return false;
        }
      });
      deepStrictEqual(
        logged(join(logs, "gateway.log")),
        logged(join(logs, "nginx.log")),
      );
    } finally {
      await Deno.remove(logs, { recursive: true });
    }
  },
});
