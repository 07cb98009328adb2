/**
 * Where the CPU of password checks goes. nginx computes a bcrypt check in
 * its worker, blocking every other connection of that worker for the whole
 * check (about 150 ms at cost 10 here); a client that sends wrong passwords
 * in a loop stalls everyone. Here slow checks (bcrypt, SHA-crypt, MD5-crypt) run in
 * slices of a few milliseconds between other work, one client's queue at a
 * time in turn, so a client with 10,000 wrong passwords waits behind its
 * own checks while another client's check waits for at most one slice per
 * busy client, and requests that need no check wait for at most one slice.
 *
 * Results of slow checks are remembered (bounded, keyed by an HMAC of the
 * stored value and the password under a key made at start), so the rightful
 * user pays the cost once rather than per request, as nginx does.
 *
 * @module
 */

import { createHmac, randomBytes } from "node:crypto";
import { byteStringToBytes } from "../runtime/mod.ts";
import { checkPassword, passwordScheme } from "./crypt.ts";

/** The outcome of one check. */
export type PasswordVerdict =
  | "match"
  | "mismatch"
  /** Too many checks are waiting (for this client, or in all). */
  | "busy"
  /** The request went away before its turn. */
  | "aborted";

/** Options for {@linkcode PasswordChecker}. */
export interface PasswordCheckerOptions {
  /** How long one slice of a slow check may run. @default {4} */
  sliceMs?: number;
  /** Checks one client may have waiting. @default {16} */
  maxPendingPerClient?: number;
  /** Checks all clients may have waiting. @default {256} */
  maxPending?: number;
  /** Results remembered. @default {1024} */
  cacheEntries?: number;
}

interface Job {
  steps: Generator<void, boolean>;
  key: string;
  client: string;
  resolve(verdict: PasswordVerdict): void;
  cancelled: boolean;
}

/** Runs password checks fairly between clients, with bounded queues. */
export class PasswordChecker {
  readonly #sliceMs: number;
  readonly #maxPerClient: number;
  readonly #maxPending: number;
  readonly #cacheEntries: number;
  readonly #secret = randomBytes(32);
  readonly #cache = new Map<string, boolean>();
  /** Waiting jobs by client, in turn order (Map keeps insertion order). */
  readonly #queues = new Map<string, Job[]>();
  #pending = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;

  /** @param options Slice length and bounds. */
  constructor(options: PasswordCheckerOptions = {}) {
    this.#sliceMs = options.sliceMs ?? 4;
    this.#maxPerClient = options.maxPendingPerClient ?? 16;
    this.#maxPending = options.maxPending ?? 256;
    this.#cacheEntries = options.cacheEntries ?? 1024;
  }

  /** Checks waiting or running now. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Checks a password against a stored value.
   *
   * @param stored The value from the user file (a ByteString).
   * @param password The password sent (a ByteString).
   * @param client Whose turn it is (the client address).
   * @param signal Aborts the wait when the request goes away.
   * @returns The verdict.
   *
   * @example Usage
   * ```ts
   * import { PasswordChecker } from "./password_checker.ts";
   * import { strictEqual } from "node:assert/strict";
   *
   * const checker = new PasswordChecker();
   * strictEqual(await checker.check("{PLAIN}pw", "pw", "127.0.0.1"), "match");
   * ```
   */
  check(
    stored: string,
    password: string,
    client: string,
    signal?: AbortSignal,
  ): Promise<PasswordVerdict> {
    const scheme = passwordScheme(stored);
    const steps = checkPassword(stored, password);
    if (
      scheme !== "bcrypt" && scheme !== "sha-crypt" && scheme !== "apr1" &&
      scheme !== "md5"
    ) {
      // Cheap: one hash at most, done now.
      return Promise.resolve(runAll(steps) ? "match" : "mismatch");
    }
    const key = this.#cacheKey(stored, password);
    const known = this.#cache.get(key);
    if (known !== undefined) {
      this.#cache.delete(key);
      this.#cache.set(key, known);
      return Promise.resolve(known ? "match" : "mismatch");
    }
    if (signal?.aborted) return Promise.resolve("aborted");
    const queue = this.#queues.get(client);
    if (
      this.#pending >= this.#maxPending ||
      (queue?.length ?? 0) >= this.#maxPerClient
    ) {
      return Promise.resolve("busy");
    }
    return new Promise((resolve) => {
      const job: Job = { steps, key, client, resolve, cancelled: false };
      const onAbort = (): void => {
        job.cancelled = true;
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      job.resolve = (verdict) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(verdict);
      };
      if (queue === undefined) this.#queues.set(client, [job]);
      else queue.push(job);
      this.#pending++;
      this.#schedule();
    });
  }

  #cacheKey(stored: string, password: string): string {
    return createHmac("sha256", this.#secret)
      .update(byteStringToBytes(stored))
      .update(new Uint8Array(1))
      .update(byteStringToBytes(password))
      .digest("base64");
  }

  #schedule(): void {
    // A macrotask, so I/O and other requests run between slices.
    this.#timer ??= setTimeout(() => {
      this.#timer = null;
      this.#slice();
    }, 0);
  }

  #slice(): void {
    const next = this.#queues.entries().next();
    if (next.done) return;
    const [client, queue] = next.value;
    const job = queue[0]!;
    let verdict: PasswordVerdict | null = null;
    if (job.cancelled) {
      verdict = "aborted";
    } else {
      const end = performance.now() + this.#sliceMs;
      for (;;) {
        const step = job.steps.next();
        if (step.done) {
          verdict = step.value ? "match" : "mismatch";
          this.#remember(job.key, step.value);
          break;
        }
        if (performance.now() >= end) break;
      }
    }
    // The client goes to the back of the turn order either way.
    this.#queues.delete(client);
    if (verdict !== null) {
      queue.shift();
      this.#pending--;
      job.resolve(verdict);
    }
    if (queue.length > 0) this.#queues.set(client, queue);
    if (this.#queues.size > 0) this.#schedule();
  }

  #remember(key: string, match: boolean): void {
    this.#cache.set(key, match);
    if (this.#cache.size > this.#cacheEntries) {
      this.#cache.delete(this.#cache.keys().next().value!);
    }
  }
}

function runAll(steps: Generator<void, boolean>): boolean {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
