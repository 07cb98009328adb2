/**
 * One connection to a FastCGI application under nginx's timers: connect is
 * one deadline (`fastcgi_connect_timeout`), send and read are between two
 * successive operations (`fastcgi_send_timeout`, `fastcgi_read_timeout`),
 * and the client leaving closes it. Each failure comes out as the
 * {@linkcode UpstreamError} nginx would log for its phase.
 *
 * @module
 */

import {
  UpstreamError,
  upstreamErrorFromOs,
  upstreamTimeout,
  type UpstreamTimeouts,
} from "../upstream/mod.ts";
import type { UpstreamAction } from "../upstream/mod.ts";

/** A connection whose every operation is timed. */
export class TimedConn {
  readonly #conn: Deno.TcpConn;
  readonly #timeouts: UpstreamTimeouts;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #expired = false;
  #clientLeft = false;
  #closed = false;
  #unwatch: (() => void) | null = null;
  /**
   * Told once, at the first close: the exchange with the server is over
   * (`UpstreamCall.onEnd`, which frees it for `least_conn`). Every way a
   * FastCGI exchange ends closes its connection (no `fastcgi_keep_conn`).
   */
  onClose: (() => void) | undefined;

  private constructor(conn: Deno.TcpConn, timeouts: UpstreamTimeouts) {
    this.#conn = conn;
    this.#timeouts = timeouts;
  }

  /**
   * Connects within `fastcgi_connect_timeout`.
   *
   * @param address The server.
   * @param timeouts The location's timers.
   * @param signal The client's: aborted when it goes away.
   * @returns The connection.
   * @throws {UpstreamError} `connect() failed`, `upstream timed out`, or the
   * client leaving.
   */
  static async open(
    address: { hostname: string; port: number },
    timeouts: UpstreamTimeouts,
    signal: AbortSignal | null,
  ): Promise<TimedConn> {
    const timer = new AbortController();
    const id = setTimeout(() => timer.abort(), timeouts.connectMs);
    const onAbort = () => timer.abort();
    signal?.addEventListener("abort", onAbort);
    try {
      const conn = await Deno.connect({
        hostname: address.hostname,
        port: address.port,
        signal: timer.signal,
      });
      conn.setNoDelay(true);
      const timed = new TimedConn(conn, timeouts);
      if (signal !== null) timed.#watch(signal);
      return timed;
    } catch (error) {
      if (signal?.aborted) throw UpstreamError.clientClosed(error);
      if (timer.signal.aborted) throw upstreamTimeout("connecting to upstream");
      throw upstreamErrorFromOs(error, "connecting to upstream", undefined, {
        upstreamHost: address.hostname,
      });
    } finally {
      clearTimeout(id);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** The client leaving closes the connection (nginx's broken-connection check). */
  #watch(signal: AbortSignal): void {
    if (signal.aborted) {
      this.#clientLeft = true;
      this.close();
      return;
    }
    const onAbort = () => {
      this.#clientLeft = true;
      this.close();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    this.#unwatch = () => signal.removeEventListener("abort", onAbort);
  }

  /**
   * Writes all of `bytes`, each write under the send timer.
   *
   * @param bytes What to send.
   * @throws {UpstreamError} A failure `while sending request to upstream`.
   */
  async write(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) {
      this.#arm(this.#timeouts.sendMs);
      try {
        at += await this.#conn.write(bytes.subarray(at));
      } catch (error) {
        throw this.#failure(error, "sending request to upstream");
      } finally {
        this.#disarm();
      }
    }
  }

  /**
   * Reads once under the read timer.
   *
   * @param into Where to read.
   * @param action The phase, for the failure's words.
   * @returns The count read, or `null` at the end of the stream.
   * @throws {UpstreamError} A failure of that phase.
   */
  async read(into: Uint8Array, action: UpstreamAction): Promise<number | null> {
    this.#arm(this.#timeouts.readMs);
    try {
      return await this.#conn.read(into);
    } catch (error) {
      throw this.#failure(error, action);
    } finally {
      this.#disarm();
    }
  }

  /** Closes the connection; later operations fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onClose?.();
    this.#disarm();
    this.#unwatch?.();
    try {
      this.#conn.close();
    } catch {
      // Closed by the runtime already.
    }
  }

  #arm(ms: number): void {
    this.#expired = false;
    this.#timer = setTimeout(() => {
      this.#expired = true;
      this.close();
    }, ms);
  }

  #disarm(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #failure(error: unknown, action: UpstreamAction): UpstreamError {
    if (this.#clientLeft) return UpstreamError.clientClosed(error);
    if (this.#expired) return upstreamTimeout(action);
    if (this.#closed) {
      // Closed from our side for another reason: the exchange was given up.
      return UpstreamError.clientClosed(error);
    }
    return upstreamErrorFromOs(error, action);
  }
}
