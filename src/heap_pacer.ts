/**
 * Major collections paced by the growth of V8's heap since the last one.
 *
 * Under 50 connections, objects of requests that outlive two scavenges (the
 * async frames and promises of a request in flight) reach V8's old
 * generation at 3-5 MB/s. V8 let it grow from 7 to ~29 MB before its first
 * mark-compact, which freed all but ~7 MB, and kept the pages: peak RSS
 * 79-93 MB against the target of 80. A major collection once the heap has
 * grown by {@linkcode DEFAULT_SLACK_BYTES} since the last one (looked at once
 * a second) keeps V8's committed heap near 20 instead of 36 MB and the peak
 * at 76-81 MB (small POST c50 alone on one core). The slack is a trade:
 * with 4 MiB the pacer collected every second under that load (11-15 ms
 * each) and cost 11-15 % more CPU per small POST (old and new side by side
 * on one core, 4 pairs; 74-80 MB); with 8 MiB nothing measurable (80-83
 * MB); 6 MiB sits between. 1 MiB downloads are unchanged; an idle or
 * lightly loaded gateway never grows that fast and is not collected.
 *
 * The young generation (at most 4 MiB, a run flag) is part of the heap in
 * use; the floor is taken when it is nearly empty, so young objects alone
 * do not exceed the slack.
 *
 * V8's `--memory-saver-mode` reaches the same peak, but it also counts the
 * external memory of streamed chunks and collected every ~250 ms during
 * 1 MiB downloads: +30 % CPU per download, old and new side by side on one
 * core. This pacer looks at the JS heap only.
 *
 * With `--expose-gc` (a run flag); without it, it does nothing.
 *
 * @module
 */

import type { Collect } from "./gc_pacer.ts";

/** Heap growth between two collections of this pacer. */
export const DEFAULT_SLACK_BYTES = 6 * 1024 * 1024;

/** How often the heap is looked at. */
export const DEFAULT_INTERVAL_MS = 1000;

/** Options for {@linkcode HeapPacer}. */
export interface HeapPacerOptions {
  /** @default {DEFAULT_SLACK_BYTES} */
  slackBytes?: number;
  /** @default {DEFAULT_INTERVAL_MS} */
  intervalMs?: number;
  /** The collector; defaults to `globalThis.gc` when exposed. */
  collect?: Collect | null;
  /** The JS heap in use; defaults to `Deno.memoryUsage().heapUsed`. */
  heapUsed?: () => number;
}

/**
 * Asks V8 for a major collection when the JS heap has grown by `slackBytes`
 * since the smallest size seen after a collection.
 *
 * @example A collection once 8 bytes of growth are seen
 * ```ts
 * import { HeapPacer } from "./heap_pacer.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * let used = 100;
 * let collections = 0;
 * const pacer = new HeapPacer({
 *   slackBytes: 8,
 *   collect: () => { collections++; used = 101; },
 *   heapUsed: () => used,
 * });
 * pacer.check();
 * used = 109;
 * strictEqual(pacer.check(), true);
 * strictEqual(collections, 1);
 * used = 105; // the floor is now 101
 * strictEqual(pacer.check(), false);
 * ```
 */
export class HeapPacer {
  #slack: number;
  #intervalMs: number;
  #collect: Collect | null;
  #heapUsed: () => number;
  #floor = Infinity;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** @param options Slack, interval and the collector. */
  constructor(options: HeapPacerOptions = {}) {
    this.#slack = options.slackBytes ?? DEFAULT_SLACK_BYTES;
    this.#intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.#collect = options.collect !== undefined
      ? options.collect
      : (globalThis as { gc?: Collect }).gc ?? null;
    this.#heapUsed = options.heapUsed ?? (() => Deno.memoryUsage().heapUsed);
  }

  /** Whether collections will be made (`--expose-gc` is on, or a collector was given). */
  get active(): boolean {
    return this.#collect !== null;
  }

  /**
   * Looks at the heap once and collects when it grew past the slack.
   *
   * @returns Whether a collection was made.
   */
  check(): boolean {
    if (this.#collect === null) return false;
    const used = this.#heapUsed();
    // V8's own collections lower the floor; live data that really grew
    // (the static cache filling) raises it after the next collection, so
    // a big live heap does not mean a collection every interval.
    if (used < this.#floor) this.#floor = used;
    if (used - this.#floor <= this.#slack) return false;
    this.#collect({ type: "major" });
    this.#floor = this.#heapUsed();
    return true;
  }

  /** Looks every `intervalMs`, without keeping the process alive. */
  start(): void {
    if (this.#collect === null || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.check(), this.#intervalMs);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** Stops looking. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
