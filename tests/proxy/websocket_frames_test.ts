import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  closePayload,
  encodeFrame,
  FrameError,
  FrameParser,
  OPCODE,
  parseClosePayload,
} from "../../src/proxy/websocket_frames.ts";

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
