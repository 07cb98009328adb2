import { strictEqual } from "node:assert/strict";
import { escapeBytes } from "../../src/routing/mod.ts";

Deno.test("escapeBytes() escapes the bytes of nginx 1.22's NGX_ESCAPE_URI table", () => {
  const escaped = new Set<number>();
  for (let c = 0; c < 0x100; c++) {
    if (escapeBytes(String.fromCharCode(c)) !== String.fromCharCode(c)) {
      escaped.add(c);
    }
  }
  const expected = new Set<number>();
  for (let c = 0; c <= 0x20; c++) expected.add(c);
  for (const ch of '"#%<>?\\^`{|}') expected.add(ch.charCodeAt(0));
  for (let c = 0x7f; c < 0x100; c++) expected.add(c);
  strictEqual(
    [...escaped].join(","),
    [...expected].sort((a, b) => a - b).join(","),
  );
  strictEqual(escapeBytes("/a b\xff|"), "/a%20b%FF%7C");
});
