import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import {
  closePayload,
  parseClosePayload,
} from "../../src/proxy/websocket_close.ts";
import { FrameParser } from "../../src/proxy/websocket_frame_parser.ts";
import { FrameError, OPCODE } from "../../src/proxy/websocket_frame_types.ts";
import { encodeFrame } from "../../src/proxy/websocket_frames.ts";
import { MessageAssembler } from "../../src/proxy/websocket_messages.ts";

function unmask(frame: Uint8Array): Uint8Array {
  // Turn a masked client frame into the unmasked form a server would send.
  const len = frame[1]! & 0x7f;
  const header = len === 126 ? 4 : len === 127 ? 10 : 2;
  const key = frame.subarray(header, header + 4);
  const payload = frame.subarray(header + 4).map((b, i) => b ^ key[i & 3]!);
  const out = new Uint8Array(header + payload.length);
  out.set(frame.subarray(0, header));
  out[1] = out[1]! & 0x7f;
  out.set(payload, header);
  return out;
}

Deno.test("encodeFrame() and FrameParser round-trip every length class", async (t) => {
  for (const size of [0, 1, 125, 126, 65535, 65536, 200_000]) {
    await t.step(`${size} bytes`, () => {
      const payload = new Uint8Array(size).map((_, i) => i % 251);
      const frame = encodeFrame(
        OPCODE.binary,
        payload,
        new Uint8Array([1, 2, 3, 4]),
      );
      strictEqual(frame[1]! & 0x80, 0x80, "client frames are masked");
      const parsed = new FrameParser().push(unmask(frame));
      strictEqual(parsed.length, 1);
      strictEqual(parsed[0]!.opcode, OPCODE.binary);
      deepStrictEqual(parsed[0]!.payload, payload);
    });
  }
});

Deno.test("FrameParser.push() assembles frames split anywhere", () => {
  const wire = new Uint8Array([
    ...encodeFrame(OPCODE.text, new TextEncoder().encode("hello"), null),
    ...encodeFrame(OPCODE.ping, new Uint8Array([9]), null),
  ]);
  for (let split = 0; split <= wire.length; split++) {
    const p = new FrameParser();
    const frames = [
      ...p.push(wire.subarray(0, split)),
      ...p.push(wire.subarray(split)),
    ];
    deepStrictEqual(
      frames.map((f) => f.opcode),
      [OPCODE.text, OPCODE.ping],
      `split ${split}`,
    );
  }
});

Deno.test("FrameParser.push() refuses what RFC 6455 forbids", () => {
  throws(
    () => new FrameParser().push(new Uint8Array([0x81, 0x81, 0, 0, 0, 0, 0])),
    FrameError,
  ); // masked
  throws(() => new FrameParser().push(new Uint8Array([0xc1, 0])), FrameError); // RSV1
  throws(() => new FrameParser().push(new Uint8Array([0x09, 0])), FrameError); // fragmented ping
  throws(
    () =>
      new FrameParser(10).push(
        new Uint8Array([0x82, 11, ...new Uint8Array(11)]),
      ),
    (e: unknown) => e instanceof FrameError && e.code === 1009,
  );
});

Deno.test("closePayload() and parseClosePayload() carry code and reason", () => {
  deepStrictEqual(parseClosePayload(closePayload(4000, "bye")), {
    code: 4000,
    reason: "bye",
  });
  deepStrictEqual(parseClosePayload(closePayload(undefined)), {
    code: undefined,
    reason: "",
  });
});

Deno.test("FrameParser.push() copies linearly, whatever the read size", async (t) => {
  const size = 4 * 1024 * 1024;
  const wire = encodeFrame(OPCODE.binary, new Uint8Array(size).fill(5), null);
  for (const step of [1024, 16 * 1024, 64 * 1024, 1024 * 1024]) {
    await t.step(`${size} bytes in ${step}-byte reads`, () => {
      const p = new FrameParser();
      const frames = [];
      for (let at = 0; at < wire.length; at += step) {
        frames.push(...p.push(wire.subarray(at, at + step)));
      }
      strictEqual(frames.length, 1);
      strictEqual(frames[0]!.payload.length, size);
      strictEqual(frames[0]!.payload[size - 1], 5);
      // Input, regrowth and payload: a few copies, not one per read.
      ok(p.bytesCopied < 5 * size, `${p.bytesCopied} bytes copied`);
    });
  }
});

Deno.test("FrameParser.push() keeps frames intact across compaction", () => {
  const p = new FrameParser();
  const out: number[] = [];
  // Frames of growing size, split so each read ends inside the next frame.
  for (let i = 1; i <= 300; i++) {
    const payload = new Uint8Array(i * 37).fill(i & 0xff);
    const wire = encodeFrame(OPCODE.binary, payload, null);
    const cut = Math.floor(wire.length / 2);
    for (const f of p.push(wire.subarray(0, cut))) out.push(f.payload.length);
    for (const f of p.push(wire.subarray(cut))) {
      out.push(f.payload.length);
      ok(f.payload.every((b) => b === (i & 0xff)), `frame ${i}`);
    }
  }
  deepStrictEqual(out, Array.from({ length: 300 }, (_, i) => (i + 1) * 37));
});

function data(opcode: number, text: string | Uint8Array, fin: boolean) {
  const payload = typeof text === "string"
    ? new TextEncoder().encode(text)
    : text;
  return { opcode, payload, fin };
}

Deno.test("MessageAssembler.add() joins fragments and checks what RFC 6455 requires", async (t) => {
  const cases: {
    name: string;
    frames: ReturnType<typeof data>[];
    want: (string | number[] | null)[] | number;
  }[] = [
    {
      name: "a whole text message",
      frames: [data(OPCODE.text, "hi", true)],
      want: ["hi"],
    },
    {
      name: "text in three fragments, UTF-8 split inside a character",
      frames: [
        data(OPCODE.text, new Uint8Array([0x68, 0xc3]), false),
        data(OPCODE.continuation, new Uint8Array([0xa9]), false),
        data(OPCODE.continuation, "!", true),
      ],
      want: [null, null, "hé!"],
    },
    {
      name: "binary in two fragments",
      frames: [
        data(OPCODE.binary, new Uint8Array([1]), false),
        data(OPCODE.continuation, new Uint8Array([2]), true),
      ],
      want: [null, [1, 2]],
    },
    {
      name: "invalid UTF-8 text",
      frames: [
        data(OPCODE.text, new Uint8Array([0xff, 0xfe, 0xc0, 0xae]), true),
      ],
      want: 1007,
    },
    {
      name: "a continuation outside a message",
      frames: [data(OPCODE.continuation, "x", true)],
      want: 1002,
    },
    {
      name: "a new message inside a fragmented one",
      frames: [data(OPCODE.text, "a", false), data(OPCODE.text, "b", true)],
      want: 1002,
    },
    {
      name: "fragments past the message limit (16 bytes)",
      frames: [
        data(OPCODE.binary, new Uint8Array(10), false),
        data(OPCODE.continuation, new Uint8Array(7), false),
      ],
      want: 1009,
    },
    {
      name: "fragments up to the message limit (16 bytes)",
      frames: [
        data(OPCODE.binary, new Uint8Array(10), false),
        data(OPCODE.continuation, new Uint8Array(6), true),
      ],
      want: [null, new Array(16).fill(0)],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const m = new MessageAssembler(16);
      const run = () =>
        c.frames.map((f) => {
          const out = m.add(f);
          return out instanceof Uint8Array ? [...out] : out;
        });
      if (typeof c.want === "number") {
        const code = c.want;
        throws(run, (e: unknown) => e instanceof FrameError && e.code === code);
        strictEqual(m.heldBytes <= 16, true);
      } else {
        deepStrictEqual(run(), c.want);
        strictEqual(m.heldBytes, 0);
      }
    });
  }
});

Deno.test("MessageAssembler.add() holds a message's bytes, not its fragments: hostile sequences stay within the bound", async (t) => {
  const LIMIT = 1024;
  const empty = data(OPCODE.continuation, new Uint8Array(0), false);
  const one = data(OPCODE.continuation, new Uint8Array([7]), false);
  /** `count` copies of `frame` (the same object: the sequence costs nothing). */
  function* times(frame: ReturnType<typeof data>, count: number) {
    for (let i = 0; i < count; i++) yield frame;
  }
  const cases: {
    name: string;
    frames: () => Iterable<ReturnType<typeof data>>;
    /** The last frame's result: a message, or the close code thrown. */
    want: string | number[] | number;
  }[] = [
    {
      name: "a text fragment, 200,000 empty continuations, the last",
      frames: function* () {
        yield data(OPCODE.text, "a", false);
        yield* times(empty, 200_000);
        yield data(OPCODE.continuation, "b", true);
      },
      want: "ab",
    },
    {
      name: "an empty binary fragment, empty continuations, an empty last",
      frames: function* () {
        yield data(OPCODE.binary, new Uint8Array(0), false);
        yield* times(empty, 100_000);
        yield data(OPCODE.continuation, new Uint8Array(0), true);
      },
      want: [],
    },
    {
      name: "one-byte fragments up to the limit",
      frames: function* () {
        yield data(OPCODE.binary, new Uint8Array([7]), false);
        yield* times(one, LIMIT - 2);
        yield data(OPCODE.continuation, new Uint8Array([7]), true);
      },
      want: new Array(LIMIT).fill(7),
    },
    {
      name: "one-byte fragments past the limit, empty ones between",
      frames: function* () {
        yield data(OPCODE.binary, new Uint8Array([7]), false);
        for (let i = 0; i < LIMIT; i++) {
          yield one;
          yield empty;
        }
      },
      want: 1009,
    },
    {
      name: "100,000 whole empty messages, then one",
      frames: function* () {
        yield* times(data(OPCODE.text, "", true), 100_000);
        yield data(OPCODE.text, "z", true);
      },
      want: "z",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const m = new MessageAssembler(LIMIT);
      let last: string | number[] | number | null = null;
      let peak = 0;
      try {
        for (const f of c.frames()) {
          const out = m.add(f);
          last = out instanceof Uint8Array ? [...out] : out;
          // Whatever the count of fragments, the buffer is at most twice
          // the bytes held (a small first one aside), never past the limit.
          peak = Math.max(peak, m.heldCapacity);
          ok(m.heldCapacity <= Math.max(2 * m.heldBytes, 64));
        }
      } catch (e) {
        ok(e instanceof FrameError, String(e));
        last = e.code;
      }
      deepStrictEqual(last, c.want);
      ok(peak <= LIMIT, `${peak} bytes held`);
      strictEqual(m.heldBytes, 0);
    });
  }
});
