/**
 * The SSI filter in a gateway started from its nginx.conf, where nginx has
 * nothing to compare: an answer streams (what one upstream read makes
 * reaches the client before the next read), hostile bodies from an
 * upstream stay bounded (an opening that never ends, values past their
 * bound, ten thousand commands, twenty thousand parameters), a client
 * that leaves closes the upstream, `include` runs 200 subrequests at
 * most per request, and blocks hold 64 KiB at most together.
 */
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  freePort,
  readHead,
  startRawUpstream,
  waitFor,
  writeText,
} from "../_utils.ts";
import { startMain } from "../_in_process.ts";

const HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" +
  "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

function chunk(text: string): string {
  return `${new TextEncoder().encode(text).length.toString(16)}\r\n${text}\r\n`;
}

/** A gateway proxying `/` to `upstream` under `ssi on`, its logs in a folder. */
/**
 * An upstream writing `piece` until the gateway closes the connection, at
 * most 100,000 times (the gateway stops reading once its client is gone).
 *
 * @returns How many pieces were written.
 */
async function writeUntilClosed(
  conn: Deno.Conn,
  piece: string,
): Promise<number> {
  let sent = 0;
  try {
    for (; sent < 100_000; sent++) await writeText(conn, piece);
  } catch {
    // The gateway closed the connection.
  }
  return sent;
}

/** A client that asks for `path`, reads 256 KiB of the answer, and leaves. */
async function readSomeAndLeave(port: number, path: string): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await writeText(conn, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  const buf = new Uint8Array(64 * 1024);
  let got = 0;
  for (let i = 0; i < 1000 && got < 256 * 1024; i++) {
    const n = await conn.read(buf);
    if (n === null) break;
    got += n;
  }
  conn.close();
}

async function gatewayFor(
  upstream: number,
): Promise<AsyncDisposable & { port: number; errors(): string[] }> {
  const dir = await Deno.makeTempDir({ prefix: "ssi-gw-" });
  const port = freePort();
  await Deno.mkdir(join(dir, "logs"), { recursive: true });
  await Deno.mkdir(join(dir, "conf"), { recursive: true });
  const conf = join(dir, "conf", "nginx.conf");
  await Deno.writeTextFile(
    conf,
    `events {}
http {
  error_log ${dir}/error.log info;
  access_log ${dir}/access.log;
  server {
    listen 127.0.0.1:${port};
    ssi on;
    location / { proxy_pass http://127.0.0.1:${upstream}; }
  }
}
`,
  );
  const gw = await startMain(["--nginx-conf", conf]);
  return {
    port: gw.port,
    errors: () => {
      try {
        return Deno.readTextFileSync(join(dir, "error.log")).split("\n")
          .filter((l) => l.includes("[error]"));
      } catch {
        return [];
      }
    },
    async [Symbol.asyncDispose]() {
      await gw[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("an SSI answer streams: what one upstream read makes reaches the client first", async () => {
  const seen = Promise.withResolvers<void>();
  await using up = startRawUpstream(async (conn) => {
    if (await readHead(conn) === null) return;
    await writeText(conn, HEAD + chunk('first <!--# echo var="uri" -->|'));
    await seen.promise;
    await writeText(conn, chunk("second") + "0\r\n\r\n");
  });
  await using gw = await gatewayFor(up.port);
  const res = await fetch(`http://127.0.0.1:${gw.port}/s/page.html`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let body = "";
  // Bounded by the answer: each turn reads a piece of it.
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    body += decoder.decode(value, { stream: true });
    if (body === "first /s/page.html|") seen.resolve();
  }
  strictEqual(body, "first /s/page.html|second");
  strictEqual(res.headers.get("content-length"), null);
});

/** The hostile bodies, each with what the client gets and the lines logged. */
const HOSTILE: {
  name: string;
  pieces: () => Iterable<string>;
  body: (text: string) => boolean;
  errors: RegExp[];
}[] = [
  {
    name: "an opening that never ends",
    pieces: function* () {
      yield "before<!--#";
      for (let i = 0; i < 200; i++) yield " ".repeat(8192);
    },
    body: (text) => text === "before",
    errors: [],
  },
  {
    name: "a value of a megabyte",
    pieces: function* () {
      yield 'a<!--# echo var="';
      for (let i = 0; i < 128; i++) yield "v".repeat(8192);
      yield '" -->b';
    },
    body: (text) =>
      text === "a[an error occurred while processing the directive]b",
    errors: [/too long "v{255}v\.\.\." value of "var" parameter/],
  },
  {
    name: "ten thousand commands",
    pieces: function* () {
      for (let i = 0; i < 100; i++) {
        yield '<!--# echo var="uri" -->'.repeat(100);
      }
    },
    body: (text) => text === "/h".repeat(10_000),
    errors: [],
  },
  {
    name: "twenty thousand parameters",
    pieces: function* () {
      yield "<!--# echo";
      for (let i = 0; i < 200; i++) yield ' a="b"'.repeat(100);
      yield " -->";
    },
    body: (text) =>
      text === "[an error occurred while processing the directive]",
    errors: [/too many SSI command parameters: "echo"/],
  },
];

for (const { name, pieces, body, errors } of HOSTILE) {
  Deno.test(`a hostile SSI body from an upstream stays bounded: ${name}`, async () => {
    await using up = startRawUpstream(async (conn) => {
      if (await readHead(conn) === null) return;
      await writeText(conn, HEAD);
      for (const piece of pieces()) await writeText(conn, chunk(piece));
      await writeText(conn, "0\r\n\r\n");
    });
    await using gw = await gatewayFor(up.port);
    const res = await fetch(`http://127.0.0.1:${gw.port}/h`);
    const text = await res.text();
    ok(body(text), `${text.length} bytes: ${text.slice(0, 200)}`);
    await waitFor(() => gw.errors().length >= errors.length);
    const lines = gw.errors();
    strictEqual(lines.length, errors.length, lines.join("\n"));
    errors.forEach((pattern, i) => ok(pattern.test(lines[i]!), lines[i]));
  });
}

Deno.test("a client leaving an SSI answer closes the upstream", async () => {
  const upstreamDone = Promise.withResolvers<number>();
  await using up = startRawUpstream(async (conn) => {
    if (await readHead(conn) === null) return;
    await writeText(conn, HEAD);
    upstreamDone.resolve(
      await writeUntilClosed(
        conn,
        chunk('<!--# echo var="uri" -->'.repeat(500)),
      ),
    );
  });
  await using gw = await gatewayFor(up.port);
  await readSomeAndLeave(gw.port, "/long");
  ok((await upstreamDone.promise) < 100_000, "the upstream was closed");
});

Deno.test("include: a stub no block names is an error, and a request makes at most 200 includes, each one past them an error", async () => {
  const page = 'a<!--# include virtual="/f$uri" stub="y" -->b' +
    '<!--# include virtual="/inc/one" -->'.repeat(250) + "c";
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const body = head.startsWith("GET /inc/") ? "1" : page;
    await writeText(conn, HEAD + chunk(body) + "0\r\n\r\n");
  });
  await using gw = await gatewayFor(up.port);
  const res = await fetch(`http://127.0.0.1:${gw.port}/i`);
  const error = "[an error occurred while processing the directive]";
  strictEqual(
    await res.text(),
    `a${error}b${"1".repeat(200)}${error.repeat(50)}c`,
  );
  strictEqual(up.connections, 201);
  await waitFor(() => gw.errors().length >= 51);
  const lines = gw.errors().map((l) => l.replace(/^.*\*\d+ /, ""));
  ok(
    lines[0]!.startsWith(
      '"stub"="y" for "include" not found while sending to client',
    ),
    lines[0],
  );
  ok(
    lines[1]!.startsWith(
      'more than 200 SSI includes in one request: "/inc/one" while sending to client',
    ),
    lines[1],
  );
  strictEqual(lines.length, 51);
});

Deno.test("blocks hold 64 KiB together: past that a block's text is dropped, with one line", async () => {
  const big = "x".repeat(40_000);
  const page = `<!--# block name="a" -->${big}<!--# endblock -->` +
    `<!--# block name="b" -->${big}<!--# echo var="uri" -->${big}<!--# endblock -->` +
    '[<!--# include virtual="/missing" stub="a" -->]' +
    '[<!--# include virtual="/missing" stub="b" -->]';
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    if (head.startsWith("GET /missing")) {
      await writeText(
        conn,
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
      );
      return;
    }
    await writeText(conn, HEAD + chunk(page) + "0\r\n\r\n");
  });
  await using gw = await gatewayFor(up.port);
  const res = await fetch(`http://127.0.0.1:${gw.port}/i`);
  const text = await res.text();
  // The second block keeps what of its text fitted (as it came, a read at
  // a time): the two together within the bound.
  ok(text.startsWith(`[${big}][`) && text.endsWith("]"), text.slice(-80));
  ok(text.length <= 65536 + 4, String(text.length));
  await waitFor(() => gw.errors().length >= 1);
  const lines = gw.errors().map((l) => l.replace(/^.*\*\d+ /, ""));
  ok(
    lines[0]!.startsWith(
      "the SSI blocks exceed 65536 bytes while sending to client",
    ),
    lines[0],
  );
  strictEqual(lines.length, 1);
});

Deno.test("blocks past the bound write one line per request, however many blocks the page and its includes hold", async () => {
  // The first block fits; about fifty of the small ones after it do too,
  // and each of the rest is dropped.
  const big = "x".repeat(60_000);
  const small = "y".repeat(100);
  const many = Array.from(
    { length: 2000 },
    (_, i) => `<!--# block name="b${i}" -->${small}<!--# endblock -->`,
  ).join("");
  const page = `<!--# block name="a" -->${big}<!--# endblock -->${many}` +
    '[<!--# include virtual="/inc" -->]';
  const include = `<!--# block name="c" -->${big}<!--# endblock -->${many}`;
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    const body = head.startsWith("GET /inc") ? include : page;
    await writeText(conn, HEAD + chunk(body) + "0\r\n\r\n");
  });
  await using gw = await gatewayFor(up.port);
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`http://127.0.0.1:${gw.port}/i`);
    strictEqual(await res.text(), "[]");
  }
  await waitFor(() => gw.errors().length >= 2);
  const lines = gw.errors().map((l) => l.replace(/^.*\*\d+ /, ""));
  ok(
    lines.every((l) =>
      l.startsWith("the SSI blocks exceed 65536 bytes while sending to client")
    ),
    lines[0],
  );
  strictEqual(lines.length, 2);
});

Deno.test("a client leaving in the middle of an include closes the include's upstream", async () => {
  const includeDone = Promise.withResolvers<number>();
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    if (!head.startsWith("GET /inc/")) {
      await writeText(
        conn,
        HEAD + chunk('a<!--# include virtual="/inc/long" -->b') + "0\r\n\r\n",
      );
      return;
    }
    await writeText(conn, HEAD);
    includeDone.resolve(
      await writeUntilClosed(conn, chunk("x".repeat(16 * 1024))),
    );
  });
  await using gw = await gatewayFor(up.port);
  await readSomeAndLeave(gw.port, "/page");
  ok(
    (await includeDone.promise) < 100_000,
    "the include's upstream was closed",
  );
});

Deno.test("include set= keeps at most 64 KiB of an answer: past that, an error line and the variable as it was", async () => {
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    if (!head.startsWith("GET /inc/")) {
      await writeText(
        conn,
        HEAD +
          chunk(
            'a<!--# include virtual="/inc/big" set="b" -->[<!--# echo var="b" -->]' +
              '<!--# include virtual="/inc/small" set="s" -->[<!--# echo var="s" -->]',
          ) + "0\r\n\r\n",
      );
      return;
    }
    await writeText(conn, HEAD);
    const big = head.startsWith("GET /inc/big");
    try {
      // Bounded: 64 pieces of 16 KiB, or the gateway closes first.
      for (let i = 0; i < (big ? 64 : 1); i++) {
        await writeText(conn, chunk(big ? "x".repeat(16 * 1024) : "<s>"));
      }
      await writeText(conn, "0\r\n\r\n");
    } catch {
      // The gateway closed the connection.
    }
  });
  await using gw = await gatewayFor(up.port);
  const res = await fetch(`http://127.0.0.1:${gw.port}/page`);
  strictEqual(await res.text(), "a[][&lt;s&gt;]");
  await waitFor(() => gw.errors().length >= 1);
  const lines = gw.errors();
  strictEqual(lines.length, 1, lines.join("\n"));
  ok(lines[0]!.includes("the SSI variables exceed 65536 bytes"), lines[0]);
});

Deno.test("a client leaving while an include waits for its upstream closes that upstream", async () => {
  const includeClosed = Promise.withResolvers<void>();
  await using up = startRawUpstream(async (conn) => {
    const head = await readHead(conn);
    if (head === null) return;
    if (head.startsWith("GET /inc/")) {
      // No answer: the connection stays until the gateway closes it.
      await conn.read(new Uint8Array(1)).catch(() => null);
      includeClosed.resolve();
      return;
    }
    await writeText(
      conn,
      HEAD + chunk('a<!--# include virtual="/inc/slow" -->b') + "0\r\n\r\n",
    );
  });
  await using gw = await gatewayFor(up.port);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
  await writeText(conn, "GET /page HTTP/1.1\r\nHost: x\r\n\r\n");
  const buf = new Uint8Array(4096);
  let got = "";
  // Bounded: the head and the text before the include.
  for (let i = 0; i < 100 && !/\r\n1\r\na\r\n$/.test(got); i++) {
    const n = await conn.read(buf);
    if (n === null) break;
    got += new TextDecoder().decode(buf.subarray(0, n));
  }
  ok(got.endsWith("\r\n1\r\na\r\n"), got);
  conn.close();
  await includeClosed.promise;
});
