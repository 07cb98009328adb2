/**
 * `autoindexHtml`: each line of nginx 1.22's listing, from entries (the
 * expected lines were taken from nginx 1.22's answers for the same names).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  type AutoindexEntry,
  autoindexHtml,
  autoindexResponse,
} from "../../src/static/mod.ts";

/** 2020-01-02 03:04:05 UTC. */
const T = Date.UTC(2020, 0, 2, 3, 4, 5) / 1000;

function lines(
  entries: AutoindexEntry[],
  options: { exactSize?: boolean; utf8?: boolean; uri?: string } = {},
): string[] {
  const html = new TextDecoder().decode(autoindexHtml({
    uri: options.uri ?? "/f/",
    entries,
    conf: { exactSize: options.exactSize ?? true, localtime: false },
    utf8: options.utf8 ?? false,
  }));
  return html.split("\r\n");
}

const file = (name: string, size = 2): AutoindexEntry => ({
  name,
  dir: false,
  mtime: T,
  size,
});

Deno.test("autoindexHtml() writes nginx's page around the entries", () => {
  deepStrictEqual(lines([], { uri: "/a&b/" }), [
    "<html>",
    "<head><title>Index of /a&amp;b/</title></head>",
    "<body>",
    '<h1>Index of /a&amp;b/</h1><hr><pre><a href="../">../</a>',
    "</pre><hr></body>",
    "</html>",
    "",
  ]);
});

Deno.test("autoindexHtml() writes each entry as nginx 1.22 does", () => {
  const long = "L".repeat(55) + ".txt";
  const wide = "长".repeat(52) + ".txt";
  const cases: [
    AutoindexEntry,
    { exactSize?: boolean; utf8?: boolean },
    string,
  ][] = [
    [
      file("a:b.txt", 3),
      {},
      '<a href="a%3Ab.txt">a:b.txt</a>' + " ".repeat(44) +
      "02-Jan-2020 03:04                   3",
    ],
    [
      file('&amp<>"q.txt'),
      {},
      '<a href="%26amp%3C%3E%22q.txt">&amp;amp&lt;&gt;&quot;q.txt</a>' +
      " ".repeat(39) + "02-Jan-2020 03:04                   2",
    ],
    [
      file(long, 60),
      {},
      `<a href="${long}">${"L".repeat(47)}..&gt;</a> ` +
      "02-Jan-2020 03:04                  60",
    ],
    [
      { name: "sub dir", dir: true, mtime: T, size: 4096 },
      {},
      '<a href="sub%20dir/">sub dir/</a>' + " ".repeat(43) +
      "02-Jan-2020 03:04                   -",
    ],
    [
      { name: "sub dir", dir: true, mtime: T, size: 4096 },
      { exactSize: false },
      '<a href="sub%20dir/">sub dir/</a>' + " ".repeat(43) +
      "02-Jan-2020 03:04       -",
    ],
    [file("n", 9999), { exactSize: false }, "   9999"],
    [file("n", 10000), { exactSize: false }, "    10K"],
    [file("n", 10751), { exactSize: false }, "    10K"],
    [file("n", 10752), { exactSize: false }, "    11K"],
    [file("n", 2621440), { exactSize: false }, "      3M"],
    [file("n", 1024 * 1024 * 1024 + 1), { exactSize: false }, "      1G"],
    [file("n", 0), { exactSize: false }, "      0"],
    [
      file("!$'()*+,;=@[]^`{|}~-._"),
      {},
      '<a href="%21%24%27%28%29%2A%2B%2C%3B%3D%40%5B%5D%5E%60%7B%7C%7D~-._">',
    ],
    [
      file("中文.txt"),
      {},
      '<a href="%E4%B8%AD%E6%96%87.txt">中文.txt</a>' + " ".repeat(41),
    ],
    [
      file("中文.txt"),
      { utf8: true },
      '<a href="%E4%B8%AD%E6%96%87.txt">中文.txt</a>' + " ".repeat(45),
    ],
    [file(wide), { utf8: true }, `>${"长".repeat(47)}..&gt;</a> 02-Jan-2020`],
  ];
  for (const [entry, options, want] of cases) {
    const line = lines([entry], options)[4]!;
    strictEqual(
      line.includes(want),
      true,
      `${entry.name} ${JSON.stringify(options)}:\n${line}\n${want}`,
    );
  }
});

Deno.test("autoindexHtml() lists folders first, then names in byte order", () => {
  const dir = (name: string): AutoindexEntry => ({ ...file(name), dir: true });
  const names = lines([
    file("b"),
    dir("z"),
    file("B"),
    file("中"),
    dir("a"),
    file("a"),
  ]).slice(4, 10).map((l) => /">([^<]*)<\/a>/.exec(l)?.[1]);
  deepStrictEqual(names, ["a/", "z/", "B", "a", "b", "中"]);
});

Deno.test("autoindexHtml() cuts a non-UTF-8 listing's long names by bytes, as nginx", () => {
  const wide = "长".repeat(52) + ".txt";
  const bytes = autoindexHtml({
    uri: "/f/",
    entries: [file(wide)],
    conf: { exactSize: true, localtime: false },
    utf8: false,
  });
  const text = new TextDecoder("latin1").decode(bytes);
  // 47 bytes of the name: 15 characters and 2 bytes of the 16th.
  const shown = new TextEncoder().encode(wide).subarray(0, 47);
  const want = new TextDecoder("latin1").decode(shown) + "..&gt;</a>";
  strictEqual(text.includes(want), true);
});

/** Names only the shell can write: bytes that are not UTF-8. */
async function touchBytes(dir: string, printfName: string): Promise<void> {
  const { success } = await new Deno.Command("sh", {
    args: ["-c", `touch "$(printf '${printfName}')"`],
    cwd: dir,
  }).output();
  strictEqual(success, true);
}

Deno.test(
  "autoindexResponse() lists a folder with names of every class, and leaves out a name that is not UTF-8 with a line (Deno cannot read it back)",
  { ignore: Deno.build.os !== "linux" },
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "autoindex-names-" });
    try {
      // [class, name]
      const names: [string, string][] = [
        ["ASCII", "plain.txt"],
        ["UTF-8", "caf\u00e9.txt"],
        ["HTML and URI escaping", 'a&<>" %.txt'],
        ["long", "L".repeat(60)],
      ];
      for (const [, name] of names) {
        await Deno.writeTextFile(`${dir}/${name}`, "x");
      }
      await touchBytes(dir, "bad\\377\\376.txt");
      await touchBytes(dir, "lone\\303.txt");
      const { response, failures } = await autoindexResponse({
        path: `${dir}/`,
        root: dir,
        uri: "/f/",
        conf: { exactSize: true, localtime: false },
        charset: null,
        head: false,
      });
      strictEqual(response.status, 200);
      const html = await response.text();
      const hrefs = [...html.matchAll(/<a href="([^"]+)">/g)].map((m) => m[1]);
      deepStrictEqual(hrefs, [
        "../",
        "L".repeat(60),
        "a%26%3C%3E%22%20%25.txt",
        "caf%C3%A9.txt",
        "plain.txt",
      ]);
      deepStrictEqual(
        failures.map((f) => [f.level, f.message]).sort(),
        [
          `"${dir}/bad\ufffd\ufffd.txt" is not listed: its name is not UTF-8, which the gateway cannot read back`,
          `"${dir}/lone\ufffd.txt" is not listed: its name is not UTF-8, which the gateway cannot read back`,
        ].map((m) => ["warn", m]),
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
