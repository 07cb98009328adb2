import { strictEqual, throws } from "node:assert/strict";
import {
  ChunkedDecoder,
  ChunkedFormatError,
} from "../../src/upstream/chunked_decoder.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("ChunkedDecoder.push() decodes across any split", () => {
  const wire = enc(
    "5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT",
  );
  for (let split = 1; split < wire.length; split++) {
    const d = new ChunkedDecoder();
    const parts: Uint8Array[] = [];
    let used = 0;
    for (const piece of [wire.subarray(0, split), wire.subarray(split)]) {
      if (d.done) break;
      const out = d.push(piece);
      parts.push(...out.data.map((x) => x.slice()));
      used += out.used;
    }
    strictEqual(parts.map(dec).join(""), "hello 0123456789", `split ${split}`);
    strictEqual(d.done, true);
    strictEqual(dec(wire.subarray(used)), "NEXT", `split ${split}`);
  }
  throws(() => new ChunkedDecoder().push(enc("zz\r\n")), ChunkedFormatError);
  throws(
    () => new ChunkedDecoder().push(enc("1\r\nab\r\n")),
    ChunkedFormatError,
  );
});
