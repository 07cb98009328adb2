/**
 * `fastcgi_next_upstream` beside a real nginx 1.22 on the same nginx.conf:
 * the same walk as the proxy's, with FastCGI's words. A responder that
 * answers by script name (a `Status: 404`, an invalid `Status:`) before
 * one that answers every request with a plain text; compared on status,
 * body, the error lines (masked) and `$upstream_status`.
 */
import { deepStrictEqual } from "node:assert/strict";
import { maskErrorLine, rawRequest, waitFor } from "../_utils.ts";
import { startFastcgiResponder } from "../_fastcgi_responder.ts";
import { bothSides, logLines, PROCESS, TEMP } from "../_same_conf.ts";

/** [location, its lines] each with a group of its own: the modes, then plain. */
const CASES: [string, string][] = [
  ["default404", ""],
  ["h404", "fastcgi_next_upstream http_404;"],
  ["default", ""],
  ["invalid", "fastcgi_next_upstream invalid_header;"],
];

function conf(port: number, modes: number, plain: number): string {
  return `${PROCESS}error_log logs/error.log warn;
events {}
http {
${TEMP}
  log_format up '$status $uri $upstream_status';
${
    CASES.map(([name]) =>
      `  upstream ${name} { server 127.0.0.1:${modes} max_fails=0; server 127.0.0.1:${plain}; }`
    ).join("\n")
  }
  server {
    listen 127.0.0.1:${port};
    access_log logs/access.log up;
${
    CASES.map(([name, lines]) =>
      `    location /${name}/ { fastcgi_pass ${name}; fastcgi_param DOCUMENT_URI $document_uri; ${lines} }`
    ).join("\n")
  }
  }
}
`;
}

/** [path, what nginx 1.22 answers] */
const REQUESTS: [string, string][] = [
  ["/default404/status.php", "404 missing"],
  ["/h404/status.php", "200 good"],
  ["/default/invalid-status.php", "502"],
  ["/invalid/invalid-status.php", "200 good"],
];

function outcome(raw: string): string {
  // The body, chunked or not: which server it came from.
  const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  const from = /\b(good|missing)\b/.exec(body)?.[1];
  return `${raw.slice(9, 12)}${from === undefined ? "" : ` ${from}`}`;
}

Deno.test("fastcgi_next_upstream moves on as nginx 1.22 does", async () => {
  await using modes = startFastcgiResponder();
  await using plain = startFastcgiResponder({ plain: "good" });
  await using both = await bothSides((port) =>
    conf(port, modes.port, plain.port)
  );
  const seen: Record<"nginx" | "gateway", string[]> = {
    nginx: [],
    gateway: [],
  };
  for (const [path] of REQUESTS) {
    const request =
      `GET ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`;
    for (const side of ["nginx", "gateway"] as const) {
      const raw = await rawRequest(both[side].port, request);
      seen[side].push(outcome(raw));
    }
  }
  deepStrictEqual(seen.nginx, REQUESTS.map(([, expected]) => expected));
  deepStrictEqual(seen.gateway, seen.nginx);
  for (const side of [both.nginx, both.gateway]) {
    await waitFor(() =>
      logLines(side.prefix, "access.log").length === REQUESTS.length
    );
  }
  const [nginx, gateway] = [both.nginx, both.gateway].map((side) => ({
    access: logLines(side.prefix, "access.log"),
    errors: logLines(side.prefix, "error.log")
      .filter((l) => l.includes(", client: ")).map(maskErrorLine),
  }));
  deepStrictEqual(gateway!.access, nginx!.access);
  deepStrictEqual(gateway!.errors, nginx!.errors);
});
