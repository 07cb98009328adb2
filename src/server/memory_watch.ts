/**
 * Looks at the process's resident memory a few times a second and reports
 * when it crosses a ceiling, once per crossing. Some growth cannot be
 * bounded from the gateway (Deno joins a WebSocket message's fragments
 * without limit before the gateway sees it; README, known differences), and
 * a process the system ends for memory writes nothing: this line is then
 * the log's record of why.
 *
 * @module
 */

/** Options for {@linkcode MemoryWatch}. */
export interface MemoryWatchOptions {
  /** Resident bytes above which `onOver` is told. */
  ceilingBytes: number;
  /** Told once per crossing, with the resident bytes. */
  onOver: (rssBytes: number) => void;
  /** How often to look. @default {250} */
  intervalMs?: number;
  /** The resident bytes. @default {() => Deno.memoryUsage().rss} */
  rss?: () => number;
}

/**
 * The watch. It reports again only after memory fell below three quarters
 * of the ceiling, so a process that stays high writes one line.
 *
 * @example Usage
 * ```ts
 * import { MemoryWatch } from "./memory_watch.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 *
 * const seen: number[] = [];
 * const samples = [100, 300, 400, 200, 50, 300];
 * const watch = new MemoryWatch({
 *   ceilingBytes: 256,
 *   onOver: (rss) => seen.push(rss),
 *   rss: () => samples.shift()!,
 * });
 * for (let i = 0; i < 6; i++) watch.check();
 * deepStrictEqual(seen, [300, 300]);
 * ```
 */
export class MemoryWatch {
  #options: MemoryWatchOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #armed = true;

  /** @param options The ceiling, what to tell, and how often to look. */
  constructor(options: MemoryWatchOptions) {
    this.#options = options;
  }

  /** Starts looking. */
  start(): void {
    this.#timer ??= setInterval(
      () => this.check(),
      this.#options.intervalMs ?? 250,
    );
  }

  /** Stops looking. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Looks once. */
  check(): void {
    const rss = (this.#options.rss ?? (() => Deno.memoryUsage().rss))();
    const ceiling = this.#options.ceilingBytes;
    if (this.#armed && rss > ceiling) {
      this.#armed = false;
      this.#options.onOver(rss);
    } else if (!this.#armed && rss < ceiling * 0.75) {
      this.#armed = true;
    }
  }
}
