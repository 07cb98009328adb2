import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  escapeControls,
  fieldBytes,
  fieldText,
  textBytes,
} from "../../src/runtime/value_bytes.ts";

/** Bytes as a ByteString (one char per byte). */
function bytes(...list: number[]): string {
  return String.fromCharCode(...list);
}

Deno.test("fieldText() and fieldBytes() carry a field's bytes through text and back, for every class of bytes", async (t) => {
  // [class, a field's bytes, the text variables hold]
  const cases: [string, string, string][] = [
    ["empty", "", ""],
    ["ASCII", "/api/x?a=1", "/api/x?a=1"],
    ["2-byte UTF-8", bytes(0x63, 0xc3, 0xa9), "c\u00e9"],
    ["3-byte UTF-8", bytes(0xe4, 0xb8, 0xad), "\u4e2d"],
    ["4-byte UTF-8", bytes(0xf0, 0x9f, 0x98, 0x80), "\u{1f600}"],
    ["a byte alone past ASCII", bytes(0x63, 0xe9), "c\udce9"],
    ["0xff", bytes(0xff), "\udcff"],
    ["a sequence cut short", bytes(0xc3, 0x41), "\udcc3A"],
    ["overlong", bytes(0xc0, 0x80), "\udcc0\udc80"],
    ["a surrogate's UTF-8", bytes(0xed, 0xa0, 0x80), "\udced\udca0\udc80"],
    [
      "UTF-8 beside bytes that are not",
      bytes(0xe9, 0xc3, 0xa9, 0xff),
      "\udce9\u00e9\udcff",
    ],
    ["controls and tab", "a\tb\x01", "a\tb\x01"],
  ];
  for (const [name, field, text] of cases) {
    await t.step(name, () => {
      strictEqual(fieldText(field), text);
      strictEqual(fieldBytes(text), field);
      deepStrictEqual(
        [...textBytes(text)],
        [...field].map((c) => c.charCodeAt(0)),
      );
    });
  }
});

Deno.test("fieldBytes() sends a value's text as nginx's bytes: $uri's é as C3 A9, not the one byte E9", () => {
  strictEqual(fieldBytes("/caf\u00e9"), "/caf\xc3\xa9");
  strictEqual(fieldBytes("/\u00ff"), "/\xc3\xbf");
  // A lone surrogate that stands for no byte is what TextEncoder makes of it.
  strictEqual(fieldBytes("\ud800"), "\xef\xbf\xbd");
});

Deno.test("fieldText() leaves text that is no ByteString as it is", () => {
  strictEqual(fieldText("\u4e2d\u00e9"), "\u4e2d\u00e9");
});

Deno.test("escapeControls() escapes every byte Deno's response writer refuses, and a tab stays", () => {
  strictEqual(
    escapeControls("a\x00\x01\x08\t\n\x0b\r\x1f\x7f~\x80"),
    "a%00%01%08\t%0A%0B%0D%1F%7F~\x80",
  );
});
