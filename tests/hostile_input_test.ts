/**
 * Hostile request heads against the gateway on loopback, with a real
 * upstream that records what reaches it: nothing malformed may be forwarded,
 * every refusal is nginx's status and line, and none throws.
 */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { rawRequest, startGateway, startUpstream, waitFor } from "./_utils.ts";

const HOST = "Host: localhost:8081\r\n";

function statusOf(raw: string): string {
  return raw.slice(9, 12) || "none";
}

function headerOf(raw: string, name: string): string | null {
  const head = raw.split("\r\n\r\n")[0]!.split("\r\n");
  const line = head.find((l) => l.toLowerCase().startsWith(`${name}:`));
  return line === undefined ? null : line.slice(name.length + 1).trim();
}

Deno.test("gateway answers 400 to every malformed Content-Length, nothing forwarded", async (t) => {
  await using up = startUpstream();
  await using gw = await startGateway({ upstreamUrl: up.origin });
  // Some are refused by Deno.serve's parser, the rest by the gateway; the
  // point is the class: none reaches the upstream.
  const values = [
    ["5", "5"],
    ["5", "6"],
    ["5, 5"],
    ["+5"],
    ["-1"],
    ["0x10"],
    ["1e3"],
    [""],
    ["9223372036854775808"],
    ["18446744073709551615"],
    ["99999999999999999999999"],
  ];
  for (const fields of values) {
    await t.step(JSON.stringify(fields), async () => {
      const head = fields.map((v) => `Content-Length: ${v}\r\n`).join("");
      const raw = await rawRequest(
        gw.port,
        `POST /api/x HTTP/1.1\r\n${HOST}${head}\r\nhello`,
      );
      strictEqual(statusOf(raw), "400", raw);
    });
  }
  strictEqual(up.seen.length, 0);
});

Deno.test("gateway answers 400 to a duplicated Content-Length past the body limit", async () => {
  await using up = startUpstream();
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    clientMaxBodySize: 1024 * 1024,
  });
  const body = "x".repeat(2 * 1024 * 1024);
  const raw = await rawRequest(
    gw.port,
    `POST /api/x HTTP/1.1\r\n${HOST}Content-Length: ${body.length}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  strictEqual(statusOf(raw), "400");
  strictEqual(up.seen.length, 0);
  await waitFor(() => gw.errorLines.length > 0);
  match(
    gw.errorLines[0]!,
    /\[info\] .* client sent duplicate header line: "Content-Length: 2097152", previous value: "Content-Length: 2097152" while reading client request headers, client: 127\.0\.0\.1, server: localhost, request: "POST \/api\/x HTTP\/1\.1", host: "localhost:8081"$/,
  );
});

Deno.test("gateway says Connection: close once with a 413 and closes after the body", async () => {
  await using up = startUpstream();
  await using gw = await startGateway({
    upstreamUrl: up.origin,
    clientMaxBodySize: 1024,
  });
  // Deno.serve discards a declared body before it closes (and a client
  // that never sends it keeps the connection: see the README's known
  // differences); once the body is in, the connection must end.
  const raw = await rawRequest(
    gw.port,
    `POST /api/x HTTP/1.1\r\n${HOST}Content-Length: 2048\r\n\r\n${
      "x".repeat(2048)
    }`,
  );
  strictEqual(statusOf(raw), "413");
  const head = raw.split("\r\n\r\n")[0]!;
  strictEqual(head.match(/^connection: close$/gim)?.length, 1, head);
  strictEqual(up.seen.length, 0);
});

Deno.test({
  name: "gateway refuses HTTP/2 prior knowledge without forwarding",
  // The client is curl, which Wine's Windows has no copy of.
  ignore: Deno.build.os === "windows",
}, async () => {
  await using up = startUpstream();
  await using gw = await startGateway({ upstreamUrl: up.origin });
  const run = async (args: string[]) => {
    const out = await new Deno.Command("curl", {
      args: [
        "-sS",
        "-o",
        "/dev/null",
        "-w",
        "%{http_version} %{http_code}",
        ...args,
      ],
    }).output();
    return new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
  };
  const url = `http://127.0.0.1:${gw.port}/api/x`;
  // A body without content-length, with one, and none.
  // With a body the 400 goes out before the body is read, so the stream is
  // reset after it (RFC 9113 §8.1), which curl may report as a framing
  // error instead of the status.
  const refused = /^2 400$|^0 000curl: \(92\)/;
  match(
    await run([
      "--http2-prior-knowledge",
      "-H",
      "Transfer-Encoding: chunked",
      "-d",
      "hello",
      url,
    ]),
    refused,
  );
  match(await run(["--http2-prior-knowledge", "-d", "hello", url]), refused);
  strictEqual(await run(["--http2-prior-knowledge", url]), "2 400");
  strictEqual(up.seen.length, 0);
  await waitFor(() => gw.accessLines.length === 3);
  for (const line of gw.accessLines) match(line, /"PRI \* HTTP\/2\.0" 400 /);
  match(
    gw.errorLines[0]!,
    /\[info\] .* client sent invalid request while reading client request line, client: 127\.0\.0\.1, server: localhost, request: "PRI \* HTTP\/2\.0"$/,
  );
});

Deno.test("gateway refuses a GET or HEAD body to /api/ instead of dropping it", async () => {
  await using up = startUpstream();
  await using gw = await startGateway({ upstreamUrl: up.origin });
  for (const method of ["GET", "HEAD"]) {
    for (const framing of ["Content-Length: 3", "Transfer-Encoding: chunked"]) {
      const body = framing.startsWith("C") ? "abc" : "3\r\nabc\r\n0\r\n\r\n";
      const raw = await rawRequest(
        gw.port,
        `${method} /api/x HTTP/1.1\r\n${HOST}${framing}\r\n\r\n${body}`,
      );
      strictEqual(statusOf(raw), "400", `${method} ${framing}`);
    }
  }
  strictEqual(up.seen.length, 0);
  // Without a body it is forwarded as before.
  const raw = await rawRequest(
    gw.port,
    `GET /api/x HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`,
  );
  strictEqual(statusOf(raw), "200");
  strictEqual(up.seen.length, 1);
});

Deno.test("gateway answers nginx's status to hostile request lines and hosts", async (t) => {
  const root = await Deno.makeTempDir();
  await Deno.mkdir(`${root}/folder`);
  await using up = startUpstream();
  await using gw = await startGateway({ upstreamUrl: up.origin, root });
  const cases: [string, string, string][] = [
    ["NUL in an /api/ path", `GET /api/x%00y HTTP/1.1\r\n${HOST}\r\n`, "400"],
    ["NUL in a static path", `GET /x%00y HTTP/1.1\r\n${HOST}\r\n`, "400"],
    ["TRACE", `TRACE /api/x HTTP/1.1\r\n${HOST}\r\n`, "405"],
    [
      "CONNECT",
      "CONNECT localhost:8080 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
      "400",
    ],
    [
      "a coding before chunked",
      `POST /api/x HTTP/1.1\r\n${HOST}Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
      "501",
    ],
    ["no Host", "GET /api/x HTTP/1.1\r\n\r\n", "400"],
    ["empty Host", "GET /api/x HTTP/1.1\r\nHost:\r\n\r\n", "400"],
    ["Host with a slash", "GET /api/x HTTP/1.1\r\nHost: a/b\r\n\r\n", "400"],
    ["Host with a space", "GET /api/x HTTP/1.1\r\nHost: a b\r\n\r\n", "400"],
    ["above the root", `GET /../../etc/passwd HTTP/1.1\r\n${HOST}\r\n`, "400"],
    [
      "encoded above the root",
      `GET /api/%2e%2e%2f..%2f..%2fetc HTTP/1.1\r\n${HOST}\r\n`,
      "400",
    ],
    [
      "encoded /api/ escape",
      `GET /api/..%2fetc/passwd HTTP/1.1\r\n${HOST}\r\n`,
      "404",
    ],
    ["bad escape", `GET /api/%zz HTTP/1.1\r\n${HOST}\r\n`, "400"],
    [
      "folder redirect, Host %zz",
      "GET /folder?a=1 HTTP/1.1\r\nHost: %zz\r\n\r\n",
      "301",
    ],
    [
      "/api redirect, Host %zz",
      "GET /api HTTP/1.1\r\nHost: %zz\r\n\r\n",
      "301",
    ],
  ];
  try {
    for (const [name, request, expected] of cases) {
      await t.step(name, async () => {
        const raw = await rawRequest(gw.port, request);
        strictEqual(statusOf(raw), expected, raw);
        if (["400", "405", "501"].includes(expected)) {
          strictEqual(headerOf(raw, "connection"), "close");
        }
      });
    }
    strictEqual(up.seen.length, 0);
    strictEqual(gw.errorLines.filter((l) => /\[alert\]/.test(l)).length, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("gateway logs nginx's lines for hostile heads", async () => {
  await using up = startUpstream();
  await using gw = await startGateway({ upstreamUrl: up.origin });
  const requests = [
    `GET /../../etc/passwd HTTP/1.1\r\n${HOST}\r\n`,
    `TRACE /api/x HTTP/1.1\r\n${HOST}\r\n`,
    "GET /api/x HTTP/1.1\r\n\r\n",
    `GET /api/x HTTP/1.1\r\n${HOST}X_Under_Score: yes\r\nConnection: close\r\n\r\n`,
    `GET http://other:9/api/abs?q=1 HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`,
  ];
  for (const r of requests) await rawRequest(gw.port, r);
  await waitFor(() => gw.accessLines.length === requests.length);
  const tail = (l: string) => l.replace(/^.*?\*\d+ /, "");
  deepStrictEqual(gw.errorLines.map(tail), [
    'client sent invalid request while reading client request line, client: 127.0.0.1, server: localhost, request: "GET /../../etc/passwd HTTP/1.1"',
    'client sent TRACE method while reading client request headers, client: 127.0.0.1, server: localhost, request: "TRACE /api/x HTTP/1.1", host: "localhost:8081"',
    'client sent HTTP/1.1 request without "Host" header while reading client request headers, client: 127.0.0.1, server: localhost, request: "GET /api/x HTTP/1.1"',
    'client sent invalid header line: "x_under_score: yes" while reading client request headers, client: 127.0.0.1, server: localhost, request: "GET /api/x HTTP/1.1", host: "localhost:8081"',
  ]);
  match(
    gw.accessLines[4]!,
    /"GET http:\/\/other:9\/api\/abs\?q=1 HTTP\/1\.1" 200 /,
  );
  // The dropped field does not reach the upstream; the absolute-form
  // request is forwarded by its path.
  deepStrictEqual(up.seen.map((s) => s.target), ["/x", "/abs?q=1"]);
  strictEqual(up.seen[0]!.headers.has("x_under_score"), false);
});

Deno.test("gateway builds absolute redirects from an absolute-form target's authority", async () => {
  await using up = startUpstream(() =>
    new Response(null, {
      status: 302,
      headers: { location: `${up.origin}/next` },
    })
  );
  await using gw = await startGateway({ upstreamUrl: up.origin });
  // nginx takes the request's server from the request line's URI, so both
  // its own redirect and a rewritten upstream Location name that host.
  const folder = await rawRequest(
    gw.port,
    `GET http://other:9999/api HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`,
  );
  strictEqual(headerOf(folder, "location"), `http://other:${gw.port}/api/`);
  const proxied = await rawRequest(
    gw.port,
    `GET http://other:9999/api/x HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`,
  );
  strictEqual(
    headerOf(proxied, "location"),
    `http://other:${gw.port}/api/next`,
  );
});
