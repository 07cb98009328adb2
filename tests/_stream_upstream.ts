/**
 * A test upstream in its own process (as on a station), so a test that
 * measures the gateway does not share an event loop with it. `GET` answers
 * `BYTES` bytes (or `?bytes=N`) with a Content-Length; `POST` counts the body and answers the
 * count. Prints its port, then serves until killed.
 *
 * Usage: deno run --allow-net tests/_stream_upstream.ts BYTES
 *
 * @module
 */

const total = Number(Deno.args[0] ?? 0);
const chunk = new Uint8Array(64 * 1024).fill(97);

const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  async (req) => {
    if (req.method === "POST") {
      let got = 0;
      for await (const c of req.body ?? []) got += c.byteLength;
      return new Response(String(got));
    }
    const asked = new URL(req.url).searchParams.get("bytes");
    const size = asked === null ? total : Number(asked);
    let left = size;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (left <= 0) return controller.close();
        const n = Math.min(left, chunk.length);
        controller.enqueue(chunk.slice(0, n));
        left -= n;
      },
    });
    return new Response(body, { headers: { "content-length": String(size) } });
  },
);
// deno-lint-ignore no-console
console.log(`port ${server.addr.port}`);
