/**
 * Which request fields reach the upstream, `$http_NAME` and the log by
 * their names, beside nginx 1.22 running the same nginx.conf: a name with
 * `_` or another character nginx calls invalid (`.`, `!`, …), under each
 * pair of `underscores_in_headers` / `ignore_invalid_headers`, read from
 * the server the Host chooses on a socket whose servers differ.
 */
import { deepStrictEqual } from "node:assert/strict";
import {
  maskErrorLine,
  rawRequest,
  recordingUpstream,
  waitFor,
} from "../_utils.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const ON_LINUX = suiteNeeds("routing/field_names_nginx_test.ts", ["nginx"]);

const ANSWER = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";

const LOCATION = `location / {
      proxy_pass http://127.0.0.1:UPSTREAM;
      proxy_set_header X-Got "$http_x_tok|$http_a_b_c|$http_x_dot";
    }`;

/** The servers, each on a port of its own but the last two. */
const SERVERS = [
  "underscores_in_headers on;",
  "",
  "ignore_invalid_headers off;",
  "underscores_in_headers on; ignore_invalid_headers off;",
];

function conf(ports: readonly number[], upstream: number): string {
  const servers = SERVERS.map((settings, i) =>
    `  server {
    listen 127.0.0.1:${ports[i]};
    ${settings}
    ${LOCATION}
  }`
  );
  return `${PROCESS}error_log logs/error.log info;
events {}
http {
${TEMP}
  log_format fields '$server_name [$http_x_tok] [$http_a_b_c] [$http_x_dot]';
  access_log logs/access.log fields;
${servers.join("\n")}
  server {
    listen 127.0.0.1:${ports[4]};
    server_name first.test;
    ${LOCATION}
  }
  server {
    listen 127.0.0.1:${ports[4]};
    server_name named.test;
    underscores_in_headers on;
    ${LOCATION}
  }
}
`.replaceAll("UPSTREAM", String(upstream));
}

function request(host: string, big: boolean): string {
  // A field past large_client_header_buffers' 8k: refused (494) after its
  // fields were read, the access line still reading them.
  const extra = big ? `X-Big: ${"b".repeat(9000)}\r\n` : "";
  return `GET /f HTTP/1.1\r\nHost: ${host}\r\nX_Tok: one\r\nX.Dot: two\r\n` +
    `A-b_C: three\r\nX-Plain: four\r\n${extra}Connection: close\r\n\r\n`;
}

/** The sockets and Host fields the request goes to, in order (and too big). */
const TARGETS: [number, string, boolean?][] = [
  [0, "a.test"],
  [1, "a.test"],
  [2, "a.test"],
  [3, "a.test"],
  [4, "named.test"],
  [4, "first.test"],
  [4, "other.test"],
  [4, "named.test", true],
];

/**
 * An upstream request head as a set of lines: field names in lower case
 * (NAMED DIFFERENCE "header-name-case": Deno.serve hands them over so), in
 * sorted order (nginx passes them in the client's order), the port masked.
 */
function fieldSet(head: string): string[] {
  return head.trim().split("\r\n").map((line, i) => {
    if (i === 0) return line;
    const colon = line.indexOf(":");
    return line.slice(0, colon).toLowerCase() + line.slice(colon);
  }).map((l) => l.replace(/127\.0\.0\.1:\d+/, "127.0.0.1:P")).sort();
}

Deno.test(
  "request fields by their names: upstream, $http_NAME, info lines as nginx 1.22",
  ON_LINUX,
  async () => {
    await using theirUp = recordingUpstream(ANSWER);
    await using ourUp = recordingUpstream(ANSWER);
    await using both = await bothSides(
      (_, side, ports) =>
        conf(ports, (side === "nginx" ? theirUp : ourUp).port),
      { ports: 5 },
    );
    const { nginx: theirs, gateway: ours } = both;
    for (const [socket, host, big = false] of TARGETS) {
      await rawRequest(theirs.ports[socket]!, request(host, big));
      await rawRequest(ours.ports[socket]!, request(host, big));
    }
    const sides = [theirs.prefix, ours.prefix];
    for (const prefix of sides) {
      await waitFor(() =>
        logLines(prefix, "access.log").length === TARGETS.length
      );
    }
    deepStrictEqual(
      ourUp.heads.map(fieldSet),
      theirUp.heads.map(fieldSet),
    );
    const [nginxLines, ourLines] = sides.map((prefix) => ({
      // NAMED DIFFERENCE "head-lines-server": the refused request's line is
      // the default server's (its name masked); its fields are as read.
      access: logLines(prefix, "access.log").map((l, i) =>
        TARGETS[i]?.[2] ? l.replace(/^\S*/, "SERVER") : l
      ),
      info: logLines(prefix, "error.log")
        .filter((l) => l.includes("invalid header line"))
        .map(maskErrorLine)
        // NAMED DIFFERENCE "header-name-case", as above; "header-order":
        // the lines come in the fields' sorted order, nginx's in the
        // client's (compared sorted).
        .map((l) => l.replace(/line: "[^:]*/, (m) => m.toLowerCase()))
        .sort(),
    }));
    deepStrictEqual(ourLines, nginxLines);
    // What nginx did, in part: `_` kept where the Host's server says so;
    // `.` kept only where invalid fields are not ignored.
    deepStrictEqual(nginxLines!.access, [
      " [one] [three] [-]",
      " [-] [-] [-]",
      " [one] [three] [-]",
      " [one] [three] [-]",
      "named.test [one] [three] [-]",
      "first.test [-] [-] [-]",
      "first.test [-] [-] [-]",
      "SERVER [one] [three] [-]",
    ]);
    deepStrictEqual(
      theirUp.heads.map((h) => h.includes("X.Dot: two")),
      [false, false, true, true, false, false, false],
    );
  },
);
