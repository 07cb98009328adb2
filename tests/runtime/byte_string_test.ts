import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  byteStringFromBytes,
  byteStringToBytes,
  byteStringToText,
  writeByteString,
} from "../../src/runtime/byte_string.ts";

/** Bytes, the ByteString holding them, and the text they spell in UTF-8. */
const CASES: [string, number[], string, string][] = [
  ["ASCII", [0x61, 0x2f, 0x7e], "a/~", "a/~"],
  ["UTF-8 é", [0xc3, 0xa9], "\u00c3\u00a9", "\u00e9"],
  [
    "UTF-8 —, whose bytes windows-1252 remaps",
    [0xe2, 0x80, 0x94],
    "\u00e2\u0080\u0094",
    "\u2014",
  ],
  ["UTF-8 CJK", [0xe6, 0x96, 0x87], "\u00e6\u0096\u0087", "\u6587"],
  [
    "bytes that are not UTF-8",
    [0x61, 0xff, 0x81],
    "a\u00ff\u0081",
    "a\ufffd\ufffd",
  ],
  ["empty", [], "", ""],
];

Deno.test("ByteString conversions keep every byte", async (t) => {
  for (const [name, bytes, held, text] of CASES) {
    await t.step(name, () => {
      strictEqual(byteStringFromBytes(new Uint8Array(bytes)), held);
      deepStrictEqual([...byteStringToBytes(held)], bytes);
      const into = new Uint8Array(bytes.length + 2).fill(0x2a);
      writeByteString(held, into, 1);
      deepStrictEqual([...into], [0x2a, ...bytes, 0x2a]);
      strictEqual(byteStringToText(held), text);
    });
  }
});

Deno.test("byteStringFromBytes() decodes heads past 4096 bytes", () => {
  const bytes = new Uint8Array(10_000).map((_, i) => i % 256);
  const held = byteStringFromBytes(bytes);
  strictEqual(held.length, bytes.length);
  deepStrictEqual([...byteStringToBytes(held)], [...bytes]);
});
