/**
 * The SSI command parser as a table: what `ngx_http_ssi_parse` makes of
 * each form (text, commands, quoting, escapes, limits, malformed commands
 * and their error lines), whole and split at every byte, and what stays
 * bounded on hostile bodies.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  type ParserSink,
  type SsiCommand,
  SsiParser,
} from "../../src/ssi/mod.ts";

type Seen = string | SsiCommand | { error: string } | "FAILED";

/** Runs a body through a parser, in pieces of `step` bytes. */
function parse(body: string, step = Infinity, valueLength = 255): Seen[] {
  const seen: Seen[] = [];
  let text = "";
  const settle = () => {
    if (text !== "") seen.push(text);
    text = "";
  };
  const sink: ParserSink = {
    text: (b, s, e) => {
      text += String.fromCharCode(...b.subarray(s, e));
    },
    command: (c) => {
      settle();
      seen.push({ ...c, params: [...c.params] });
    },
    failed: () => {
      settle();
      seen.push("FAILED");
    },
    log: (message) => {
      settle();
      seen.push({ error: message });
    },
  };
  const parser = new SsiParser(valueLength);
  const bytes = Uint8Array.from(body, (c) => c.charCodeAt(0));
  const size = Math.min(step, bytes.length) || 1;
  for (let at = 0; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, at + size);
    for (let p = 0; p < piece.length;) p = parser.run(piece, p, sink);
  }
  parser.end();
  settle();
  return seen;
}

const cmd = (
  name: string,
  params: [string, string][] = [],
  count = params.length,
): SsiCommand => ({
  name,
  params: params.map(([key, value]) => ({ key, value })),
  count,
});

const TABLE: [string, string, Seen[]][] = [
  ["text alone", "<p>a < b</p>", ["<p>a < b</p>"]],
  ["a comment that is no command", "a<!-- x -->b", ["a<!-- x -->b"]],
  ["a command", 'a<!--# echo var="x" -->b', [
    "a",
    cmd("echo", [["var", "x"]]),
    "b",
  ]],
  ["no space, tabs and line ends", '<!--#echo\tvar="x"\r\n-->', [
    cmd("echo", [["var", "x"]]),
  ]],
  ["single quotes", "<!--# set var='a' value='b\"c' -->", [
    cmd("set", [["var", "a"], ["value", 'b"c']]),
  ]],
  ["escapes kept for evaluation", '<!--# set value="a\\"b\\\\c\\d" -->', [
    cmd("set", [["value", 'a\\"b\\\\c\\d']]),
  ]],
  ["spaces around =", '<!--# echo var = "x" -->', [
    cmd("echo", [["var", "x"]]),
  ]],
  ["a name ended by --", "<!--#endif-->", [cmd("endif")]],
  ["a partial opening is text", "a<!-b<!x<-c", ["a<!-b<!x<-c"]],
  ["a < restarts the opening", '<<!--#echo var="x"-->', [
    "<",
    cmd("echo", [["var", "x"]]),
  ]],
  ["<!-- then <!--#", '<!--<!--# echo var="x" -->', [
    "<!--",
    cmd("echo", [["var", "x"]]),
  ]],
  ["a partial opening at the end is dropped", "a<!-", ["a"]],
  ["an unfinished command at the end is dropped", 'a<!--# echo var="x', [
    "a",
  ]],
  ["a command name of 32 bytes", `<!--# ${"c".repeat(32)} -->`, [
    cmd("c".repeat(32)),
  ]],
  ["a command name of 33 bytes", `<!--# ${"c".repeat(33)} -->x`, [
    { error: `the "${"c".repeat(33)}..." SSI command is too long` },
    "FAILED",
    "x",
  ]],
  ["a key of 33 bytes", `<!--# echo ${"k".repeat(33)}="v" -->`, [
    {
      error: `too long "${"k".repeat(33)}..." parameter in "echo" SSI command`,
    },
    "FAILED",
  ]],
  ["a value of 255 bytes", `<!--# echo var="${"v".repeat(255)}" -->`, [
    cmd("echo", [["var", "v".repeat(255)]]),
  ]],
  ["a value of 256 bytes", `<!--# echo var="${"v".repeat(256)}" -->`, [
    {
      error: `too long "${
        "v".repeat(255)
      }v..." value of "var" parameter in "echo" SSI command`,
    },
    "FAILED",
  ]],
  ["- after a key", "<!--# echo var- -->", [
    {
      error:
        'unexpected "-" symbol after "var" parameter in "echo" SSI command',
    },
    "FAILED",
  ]],
  ["no = after a key", "<!--# echo var x -->", [
    {
      error:
        'unexpected "x" symbol after "var" parameter in "echo" SSI command',
    },
    "FAILED",
  ]],
  ["no quote before a value", "<!--# echo var=x -->", [
    {
      error:
        'unexpected "x" symbol before value of "var" parameter in "echo" SSI command',
    },
    "FAILED",
  ]],
  ["a byte after a value", '<!--# echo var="a"x -->', [
    {
      error:
        'unexpected "x" symbol after "a" value of "var" parameter in "echo" SSI command',
    },
    "FAILED",
  ]],
  ["-x in a command", "<!--# echo -x -->", [
    { error: 'unexpected "x" symbol in "echo" SSI command' },
    "FAILED",
  ]],
  ["-- not followed by >", "<!--#echo-- >", [
    { error: 'unexpected " " symbol in "echo" SSI command' },
  ]],
  ["an error runs to the next -->", "<!--# echo var=x y -- z -->t", [
    {
      error:
        'unexpected "x" symbol before value of "var" parameter in "echo" SSI command',
    },
    "FAILED",
    "t",
  ]],
  [
    "17 parameters are counted, 17 kept",
    `<!--# echo ${
      Array.from({ length: 20 }, (_, i) => `p${i}="v"`).join(" ")
    } -->`,
    [
      cmd(
        "echo",
        Array.from(
          { length: 17 },
          (_, i) => [`p${i}`, "v"] as [string, string],
        ),
        20,
      ),
    ],
  ],
];

for (const [name, body, expected] of TABLE) {
  Deno.test(`SsiParser: ${name}, whole and split at every byte`, () => {
    deepStrictEqual(parse(body), expected, "whole");
    for (const step of [1, 2, 3, 7]) {
      deepStrictEqual(parse(body, step), expected, `in pieces of ${step}`);
    }
  });
}

Deno.test("SsiParser: ssi_value_length bounds values", () => {
  deepStrictEqual(parse('<!--# echo var="abcdefgh" -->', Infinity, 8), [
    cmd("echo", [["var", "abcdefgh"]]),
  ]);
  deepStrictEqual(parse('<!--# echo var="abcdefghi" -->', Infinity, 8), [
    {
      error:
        'too long "abcdefghi..." value of "var" parameter in "echo" SSI command',
    },
    "FAILED",
  ]);
});

Deno.test("SsiParser: hostile bodies keep its state bounded", () => {
  const parser = new SsiParser(255);
  let texts = 0;
  let commands = 0;
  let logs = 0;
  const sink: ParserSink = {
    text: () => void texts++,
    command: (c) => {
      commands++;
      ok(c.params.length <= 17);
    },
    failed: () => {},
    log: () => void logs++,
  };
  const feed = (text: string, times: number) => {
    const bytes = new TextEncoder().encode(text);
    for (let i = 0; i < times; i++) {
      for (let p = 0; p < bytes.length;) p = parser.run(bytes, p, sink);
    }
  };
  // An opening that never ends: one command, whatever follows.
  feed("<!--# echo ", 1);
  feed(`p="v" `, 100_000);
  feed("-->", 1);
  strictEqual(commands, 1);
  // A value past its bound: one error line, then nothing kept to the end.
  feed('<!--# echo var="', 1);
  feed("x".repeat(65536), 16);
  feed('" -->', 1);
  strictEqual(logs, 1);
  // Ten thousand commands, one each.
  feed('<!--# echo var="uri" -->', 10_000);
  strictEqual(commands, 10_001);
});

Deno.test("SsiParser: a large ssi_value_length is grown into, not taken at once", () => {
  const value = "v".repeat(300_000);
  deepStrictEqual(parse(`<!--# set value="${value}" -->`, 65536, 1 << 30), [
    cmd("set", [["value", value]]),
  ]);
});
