/**
 * What a proxied location derives from its settings, made on its first
 * request and kept with it.
 *
 * @module
 */

/**
 * A function of an object (a location's merged settings) made once per
 * object: the last object's value is kept beside the `WeakMap`, since most
 * requests go to the one proxied location and a `WeakMap` look-up per
 * request showed in profiles of a small POST.
 *
 * @param make Makes the value for an object seen the first time.
 * @returns The memoised function.
 *
 * @example Usage
 * ```ts
 * import { perObject } from "./location_memo.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * let made = 0;
 * const size = perObject((o: { names: string[] }) => (made++, o.names.length));
 * const conf = { names: ["a", "b"] };
 * strictEqual(size(conf) + size(conf), 4);
 * strictEqual(made, 1);
 * ```
 */
export function perObject<K extends object, V>(
  make: (key: K) => V,
): (key: K) => V {
  const made = new WeakMap<K, V>();
  let lastKey: K | null = null;
  let lastValue: V | undefined;
  return (key) => {
    if (key === lastKey) return lastValue!;
    let value = made.get(key);
    if (value === undefined) {
      value = make(key);
      made.set(key, value);
    }
    lastKey = key;
    lastValue = value;
    return value;
  };
}
