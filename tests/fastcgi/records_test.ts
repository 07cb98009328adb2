/**
 * The FastCGI record codec as tables: the request's records byte by byte
 * (BEGIN_REQUEST, PARAMS with 1- and 4-byte lengths and 8-byte padding,
 * STDIN split at 32 KiB), and the reply's records decoded whatever the
 * reads' boundaries, each malformed header with nginx's words.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  encodeRequestHead,
  RecordDecoder,
  type RecordEvent,
  stdinRecords,
} from "../../src/fastcgi/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("encodeRequestHead() writes BEGIN_REQUEST, one padded PARAMS and the empty PARAMS", () => {
  const head = encodeRequestHead([[enc.encode("AB"), enc.encode("c")]], false);
  deepStrictEqual(
    head,
    new Uint8Array([
      ...[1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
      // 1 + 1 + 2 + 1 = 5 bytes, 3 of padding.
      ...[1, 4, 0, 1, 0, 5, 3, 0, 2, 1, 65, 66, 99, 0, 0, 0],
      ...[1, 4, 0, 1, 0, 0, 0, 0],
    ]),
  );
  const kept = encodeRequestHead([], true) as Uint8Array;
  strictEqual(kept[10], 1, "FCGI_KEEP_CONN");
});

Deno.test("encodeRequestHead() uses 4-byte lengths past 127 and refuses a record past 65535", () => {
  const cases: [number, number, number | null][] = [
    // [value length, expected length field size, refused length]
    [127, 1, null],
    [128, 4, null],
    // 1 + 4 + 1 + 65529 = 65535: the most one record carries.
    [65529, 4, null],
    [65530, 4, 65536],
  ];
  for (const [size, field, refused] of cases) {
    const head = encodeRequestHead(
      [[enc.encode("A"), new Uint8Array(size)]],
      false,
    );
    if (refused !== null) {
      deepStrictEqual(head, { tooBig: refused }, `${size}`);
      continue;
    }
    const bytes = head as Uint8Array;
    const length = (bytes[20]! << 8) | bytes[21]!;
    strictEqual(length, 1 + field + 1 + size, `${size}`);
    strictEqual(bytes[25]! >= 0x80, field === 4, `${size}`);
  }
});

Deno.test("stdinRecords() splits at 32 KiB and pads each record to 8 bytes", () => {
  const cases: [number, number[]][] = [
    [0, [0]],
    [1, [1]],
    [8, [8]],
    [32 * 1024, [32 * 1024]],
    [32 * 1024 + 3, [32 * 1024, 3]],
  ];
  for (const [size, lengths] of cases) {
    const out = stdinRecords(new Uint8Array(size));
    const seen: number[] = [];
    for (let at = 0; at < out.length;) {
      strictEqual(out[1 + at], 5);
      const length = (out[at + 4]! << 8) | out[at + 5]!;
      strictEqual((length + out[at + 6]!) % 8, 0);
      seen.push(length);
      at += 8 + length + out[at + 6]!;
    }
    deepStrictEqual(seen, lengths, `${size}`);
  }
});

function record(type: number, content: number[], padding = 0): number[] {
  return [
    1,
    type,
    0,
    1,
    content.length >> 8,
    content.length & 0xff,
    padding,
    0,
    ...content,
    ...Array(padding).fill(0),
  ];
}

/** Decodes `bytes` read `step` bytes at a time, pieces of a kind joined. */
function decode(bytes: number[], step: number): string[] {
  const decoder = new RecordDecoder();
  const events: RecordEvent[] = [];
  const all = new Uint8Array(bytes);
  for (let at = 0; at < all.length; at += step) {
    decoder.push(all.subarray(at, at + step), events);
  }
  const out: string[] = [];
  for (const e of events) {
    const text = e.kind === "stdout" || e.kind === "stderr"
      ? `${e.kind}:${dec.decode(e.bytes)}`
      : e.kind === "error"
      ? `error:${e.message}`
      : e.kind;
    const last = out.at(-1);
    if (
      last !== undefined && (e.kind === "stdout" || e.kind === "stderr") &&
      last.startsWith(`${e.kind}:`)
    ) {
      out[out.length - 1] = last + text.slice(e.kind.length + 1);
    } else out.push(text);
  }
  return out;
}

const ASCII = (s: string) => [...enc.encode(s)];

const REPLIES: [string, number[], string[]][] = [
  [
    "stdout, stderr, the end",
    [
      ...record(6, ASCII("X: 1\r\n\r\nhi"), 6),
      ...record(7, ASCII("warn"), 4),
      ...record(6, []),
      ...record(3, [0, 0, 0, 0, 0, 0, 0, 0]),
    ],
    ["stdout:X: 1\r\n\r\nhi", "stderr:warn", "stdout-end", "end"],
  ],
  [
    "empty records with padding only",
    [...record(7, [], 255), ...record(7, [], 255), ...record(6, ASCII("a"))],
    ["stdout:a"],
  ],
  [
    "an unknown record type",
    [...record(11, ASCII("x")), ...record(6, ASCII("a"))],
    ["error:upstream sent invalid FastCGI record type: 11"],
  ],
  [
    "another protocol version",
    [2, 6, 0, 1, 0, 0, 0, 0],
    ["error:upstream sent unsupported FastCGI protocol version: 2"],
  ],
  [
    "another request id",
    [1, 6, 0, 2, 0, 0, 0, 0],
    ["error:upstream sent unexpected FastCGI request id low byte: 2"],
  ],
  [
    "a request id past 255",
    [1, 6, 1, 1, 0, 0, 0, 0],
    ["error:upstream sent unexpected FastCGI request id high byte: 1"],
  ],
  [
    "nothing after END_REQUEST is read",
    [...record(3, [0, 0, 0, 0, 0, 0, 0, 0]), ...record(6, ASCII("late"))],
    ["end"],
  ],
];

Deno.test("RecordDecoder decodes records whatever the reads' boundaries", () => {
  for (const [what, bytes, want] of REPLIES) {
    for (const step of [1, 3, 8, 1000]) {
      deepStrictEqual(decode(bytes, step), want, `${what}, ${step} a read`);
    }
  }
});

Deno.test("RecordDecoder keeps no content: its pieces are views of the reads", () => {
  const read = new Uint8Array(record(6, ASCII("x".repeat(1000))));
  const events: RecordEvent[] = [];
  new RecordDecoder().push(read, events);
  const piece = events[0] as { bytes: Uint8Array };
  strictEqual(piece.bytes.buffer, read.buffer);
});
