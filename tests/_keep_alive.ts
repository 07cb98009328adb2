/**
 * A client's side of a keep-alive connection in storm tests: one response
 * at a time, framed by its Content-Length.
 */

const decoder = new TextDecoder();

/**
 * Reads one response (head and Content-Length body) off a keep-alive
 * connection; bytes past it stay in `state` for the next.
 *
 * @returns The status line's first 12 characters (`HTTP/1.1 401`), or
 * `null` when the connection ended first.
 */
export async function readResponse(
  conn: Deno.Conn,
  state: { buffer: Uint8Array },
): Promise<string | null> {
  const chunk = new Uint8Array(16 * 1024);
  for (let reads = 0; reads < 1000; reads++) {
    const text = decoder.decode(state.buffer);
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
      const total = end + 4 + length;
      if (state.buffer.length >= total) {
        state.buffer = state.buffer.slice(total);
        return text.slice(0, 12);
      }
    }
    const n = await conn.read(chunk);
    if (n === null) return null;
    const next = new Uint8Array(state.buffer.length + n);
    next.set(state.buffer);
    next.set(chunk.subarray(0, n), state.buffer.length);
    state.buffer = next;
  }
  return null;
}
