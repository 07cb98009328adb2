/** nginx's tokenizer rules (ngx_conf_read_token), as table tests. */
import { deepStrictEqual } from "node:assert/strict";
import { tokenize } from "../../src/nginx_conf/lexer.ts";

/** The words of each statement, or the error with its line. */
function words(text: string): string[][] | string {
  const out = tokenize(text);
  if (!Array.isArray(out)) return `${out.message}:${out.line}`;
  return out.filter((s) => s.end !== "eof").map((s) => [...s.words, s.end]);
}

const CASES: [string, string, string[][] | string][] = [
  ["plain words", "listen  80\tdefault_server;", [[
    "listen",
    "80",
    "default_server",
    ";",
  ]]],
  ["double quotes keep blanks", 'root "my html";', [["root", "my html", ";"]]],
  ["single quotes keep double ones", `a 'say "hi"';`, [["a", 'say "hi"', ";"]]],
  ["escaped quote outside quotes", 'a b\\"c;', [["a", 'b"c', ";"]]],
  ["escaped quote inside quotes", '"a\\"b" c;', [['a"b', "c", ";"]]],
  ["escaped single quote", "'a\\'b';", [["a'b", ";"]]],
  ["escaped backslash", "a b\\\\c;", [["a", "b\\c", ";"]]],
  ["\\n, \\t, \\r become control characters", "a C:\\nginx\\tx\\ry;", [[
    "a",
    "C:\nginx\tx\ry",
    ";",
  ]]],
  ["other escapes keep the backslash", "root C:\\www\\html;", [[
    "root",
    "C:\\www\\html",
    ";",
  ]]],
  ["escaped blank joins words", "a b\\ c;", [["a", "b\\ c", ";"]]],
  ["# starts a comment at a word start", "a; # b;\nc;", [["a", ";"], [
    "c",
    ";",
  ]]],
  ["# inside a word is a character", "a b#c;", [["a", "b#c", ";"]]],
  ["# inside quotes is a character", 'a "#b";', [["a", "#b", ";"]]],
  ["empty quoted word", 'a "";', [["a", "", ";"]]],
  ["${ does not open a block", "set $a ${b}c;", [["set", "$a", "${b}c", ";"]]],
  ["{ after a word opens a block", "http{a;}", [["http", "{"], ["a", ";"], [
    "}",
  ]]],
  ["; ends a quoted word", '"a";', [["a", ";"]]],
  ["{ ends a quoted word", "location '/'{}", [["location", "/", "{"], ["}"]]],
  [") may follow a closing quote", 'if ($a = "b") {}', [[
    "if",
    "($a",
    "=",
    "b",
    ")",
    "{",
  ], ["}"]]],
  ["CRLF line ends", "a b;\r\nc d;\r\n", [["a", "b", ";"], ["c", "d", ";"]]],
  ["a word right after a closing quote", 'a "b"c;', 'unexpected "c":1'],
  ["a lone ;", "a;\n;", 'unexpected ";":2'],
  ["a lone {", "{", 'unexpected "{":1'],
  ["} after words", "a {\n b c\n}", 'unexpected "}":3'],
  [
    "end of file after words",
    "a b",
    'unexpected end of file, expecting ";" or "}":1',
  ],
  [
    "end of file inside quotes",
    'a "b;\n\n',
    'unexpected end of file, expecting ";" or "}":3',
  ],
  ["end of file inside a comment", "a;\n# b", [["a", ";"]]],
];

for (const [name, text, expected] of CASES) {
  Deno.test(`tokenize(): ${name}`, () => {
    deepStrictEqual(words(text), expected);
  });
}

Deno.test("tokenize() reports the line where a statement ends", () => {
  const out = tokenize("a\n b\n ;\nc;");
  deepStrictEqual(Array.isArray(out) && out.map((s) => s.line), [3, 4, 4]);
});
