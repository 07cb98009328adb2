/**
 * Major collections paced by the growth of V8's old generation since the
 * last one.
 *
 * Under sustained load, objects of requests in flight that outlive two
 * scavenges (async frames, promises) are promoted to the old generation.
 * V8 starts its first mark-compact late and keeps the freed pages, so peak
 * RSS settles at the high mark. A major collection once the old generation
 * has grown by {@linkcode DEFAULT_SLACK_BYTES} since the last one (looked at
 * once a second) keeps the committed heap small; the slack trades CPU (a
 * smaller one collects every second under load) against peak RSS.
 *
 * Only the old generation is measured (every heap space but the two young
 * ones, from `node:v8`'s `getHeapSpaceStatistics()`): the young generation
 * swings by megabytes between scavenges, so counting it collected even a
 * lightly loaded gateway every few seconds, and each pause landed on the
 * requests in flight. V8's `--memory-saver-mode` was not used
 * because it also counts the external memory of streamed chunks and
 * collects constantly during downloads. Measurements: scripts/README.md.
 *
 * With `--expose-gc` (a run flag); without it, it does nothing.
 *
 * @module
 */

import { getHeapSpaceStatistics } from "node:v8";
import type { Collect } from "./gc_pacer.ts";

/** Heap growth between two collections of this pacer. */
export const DEFAULT_SLACK_BYTES = 8 * 1024 * 1024;

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
