/**
 * Major collections paced by the growth of V8's old generation since the
 * last one.
 *
 * Under 50 connections, objects of requests that outlive two scavenges (the
 * async frames and promises of a request in flight) reach V8's old
 * generation at 3-5 MB/s. V8 let it grow from 7 to ~29 MB before its first
 * mark-compact, which freed all but ~7 MB, and kept the pages: peak RSS
 * 79-93 MB against the target of 80. A major collection once the old
 * generation has grown by {@linkcode DEFAULT_SLACK_BYTES} since the last one (looked at once
 * a second) keeps V8's committed heap near 20 instead of 36 MB and the peak
 * at 76-81 MB (small POST c50 alone on one core). The slack is a trade:
 * with 4 MiB the pacer collected every second under that load (11-15 ms
 * each) and cost 11-15 % more CPU per small POST (old and new side by side
 * on one core, 4 pairs; 74-80 MB); with 8 MiB nothing measurable (80-83
 * MB); 6 MiB sits between. 1 MiB downloads are unchanged; an idle or
 * lightly loaded gateway never grows that fast and is not collected.
 *
 * Only the old generation is measured (every heap space but the two young
 * ones, from `node:v8`'s `getHeapSpaceStatistics()`, ~18 µs). The pacer
 * first watched `Deno.memoryUsage().heapUsed`, which includes the young
 * generation: 0-4 MiB depending on when the last scavenge ran. With the
 * floor taken at start-up, that and the old generation's own warm-up (4.6
 * to 7.5 MB: compiled code and caches) passed the slack even under one
 * connection, so a lightly loaded gateway was collected every 3-4 s (13-17
 * ms each, `--trace-gc`). Slow requests cluster after each of those
 * collections (a one-connection client counting requests over 2 ms per
 * second saw 9-17 in the second of a collection, 1-4 in the others), and
 * the benchmark's p99 at c1 was about 2.5 ms with it against 0.6-0.8 ms
 * with the pacer checking but never collecting (10 alternating 2 s wrk runs
 * each, same host quarter hour). Watching the old generation, one
 * connection for 20 s grows it by 3 MB and nothing is collected, while at
 * c50 the peak stays where it was (77-82 MB against 77-83 MB, 3 fresh
 * starts each; 88-92 MB with no pacer).
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

import { getHeapSpaceStatistics } from "node:v8";
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
  /** The old generation's bytes in use; defaults to {@linkcode oldGenerationUsed}. */
  oldGenerationUsed?: () => number;
}

/** The heap spaces of V8's young generation, left out of the measure. */
const YOUNG_SPACES = new Set(["new_space", "new_large_object_space"]);

/**
 * Bytes in use in V8's heap outside the young generation: what only a major
 * collection frees.
 *
 * @param spaces V8's heap spaces, as `node:v8`'s `getHeapSpaceStatistics()`
 * reports them.
 * @returns The sum of `space_used_size` over the spaces that are not young.
 *
 * @example Usage
 * ```ts
 * import { oldGenerationUsed } from "./heap_pacer.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(oldGenerationUsed([
 *   { space_name: "new_space", space_used_size: 3 },
 *   { space_name: "old_space", space_used_size: 5 },
 *   { space_name: "code_space", space_used_size: 1 },
 * ]), 6);
 * ```
 */
export function oldGenerationUsed(
  spaces: readonly { space_name: string; space_used_size: number }[] =
    getHeapSpaceStatistics(),
): number {
  let used = 0;
  for (const space of spaces) {
    if (!YOUNG_SPACES.has(space.space_name)) used += space.space_used_size;
  }
  return used;
}

/**
 * Asks V8 for a major collection when its old generation has grown by
 * `slackBytes` since the smallest size seen after a collection.
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
 *   oldGenerationUsed: () => used,
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
  #oldGenerationUsed: () => number;
  #floor = Infinity;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** @param options Slack, interval and the collector. */
  constructor(options: HeapPacerOptions = {}) {
    this.#slack = options.slackBytes ?? DEFAULT_SLACK_BYTES;
    this.#intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.#collect = options.collect !== undefined
      ? options.collect
      : (globalThis as { gc?: Collect }).gc ?? null;
    this.#oldGenerationUsed = options.oldGenerationUsed ??
      (() => oldGenerationUsed());
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
    const used = this.#oldGenerationUsed();
    // V8's own collections lower the floor; live data that really grew
    // (the static cache filling) raises it after the next collection, so
    // a big live heap does not mean a collection every interval.
    if (used < this.#floor) this.#floor = used;
    if (used - this.#floor <= this.#slack) return false;
    this.#collect({ type: "major" });
    this.#floor = this.#oldGenerationUsed();
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
