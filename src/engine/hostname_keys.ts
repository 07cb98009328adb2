/**
 * nginx's combined hash of host names (`ngx_hash_add_key` with
 * `NGX_HASH_WILDCARD_KEY`, `ngx_hash_find_combined`), shared by
 * `server_name` and `map … { hostnames; }`: exact names, then the longest
 * leading wildcard (`*.example.com` takes subdomains only, `.example.com`
 * the name itself too), then the longest trailing wildcard
 * (`www.example.*`). A key that conflicts with one added before it is
 * refused (`NGX_BUSY`), so the first one wins.
 *
 * @module
 */

/** The wildcard part of a table (exact names live in a `Map` beside it). */
export interface HostnameWildcards<T> {
  /** Leading wildcards: `.example.com` suffixes, longest first; `bare` for `.example.com`. */
  leading: readonly { suffix: string; bare: boolean; value: T }[];
  /** Trailing wildcards: `www.example.` prefixes, longest first. */
  trailing: readonly { prefix: string; value: T }[];
}

/** A table being filled, key by key, in file order. */
export interface HostnameTable<T> {
  /** Exact names, lower case. */
  exact: Map<string, T>;
  /** The wildcards, sorted by {@linkcode sortWildcards}. */
  wildcards: {
    leading: { suffix: string; bare: boolean; value: T }[];
    trailing: { prefix: string; value: T }[];
  };
  /** Names the exact table holds, with `.example.com`'s `example.com`. */
  names: Set<string>;
  /** Leading wildcards' names without the `*.` or `.`. */
  heads: Set<string>;
  /** Trailing wildcards' names without the `.*`. */
  tails: Set<string>;
}

/** An empty table. */
export function hostnameTable<T>(): HostnameTable<T> {
  return {
    exact: new Map(),
    wildcards: { leading: [], trailing: [] },
    names: new Set(),
    heads: new Set(),
    tails: new Set(),
  };
}

/**
 * Adds a key as `ngx_hash_add_key` does (lower case).
 *
 * @param table The table.
 * @param key The key as written.
 * @param value Its value.
 * @param wildcards `NGX_HASH_WILDCARD_KEY`: `*.x`, `.x` and `x.*` are
 * wildcards; otherwise every key is exact.
 * @returns `ok`; `busy` for a key that conflicts with an earlier one;
 * `declined` for a wildcard nginx cannot hash (`*` elsewhere, two `*`,
 * `..`).
 *
 * @example Usage
 * ```ts
 * import { addHostnameKey, findHostname, hostnameTable } from "./hostname_keys.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const table = hostnameTable<string>();
 * strictEqual(addHostnameKey(table, "*.ex.com", "sub", true), "ok");
 * strictEqual(addHostnameKey(table, ".ex.com", "both", true), "busy");
 * strictEqual(findHostname(table.exact, table.wildcards, "a.ex.com"), "sub");
 * strictEqual(findHostname(table.exact, table.wildcards, "ex.com"), undefined);
 * ```
 */
export function addHostnameKey<T>(
  table: HostnameTable<T>,
  key: string,
  value: T,
  wildcards: boolean,
): "ok" | "busy" | "declined" {
  const lower = key.toLowerCase();
  if (wildcards) {
    if ((lower.match(/\*/g)?.length ?? 0) > 1 || lower.includes("..")) {
      return "declined";
    }
    if (lower.length > 1 && lower.startsWith(".")) {
      return addHead(table, lower.slice(1), true, value);
    }
    if (lower.length > 2 && lower.startsWith("*.")) {
      return addHead(table, lower.slice(2), false, value);
    }
    if (lower.length > 2 && lower.endsWith(".*")) {
      const name = lower.slice(0, -2);
      if (table.tails.has(name)) return "busy";
      table.tails.add(name);
      table.wildcards.trailing.push({ prefix: `${name}.`, value });
      return "ok";
    }
    if (lower.includes("*")) return "declined";
  }
  if (table.names.has(lower)) return "busy";
  table.names.add(lower);
  table.exact.set(lower, value);
  return "ok";
}

/** A leading wildcard: `.name` also claims `name` in the exact table. */
function addHead<T>(
  table: HostnameTable<T>,
  name: string,
  bare: boolean,
  value: T,
): "ok" | "busy" {
  if (bare) {
    if (table.names.has(name)) return "busy";
    table.names.add(name);
  }
  if (table.heads.has(name)) return "busy";
  table.heads.add(name);
  table.wildcards.leading.push({ suffix: `.${name}`, bare, value });
  return "ok";
}

/**
 * Orders the wildcards longest first, once every key is in.
 *
 * @param table The filled table.
 */
export function sortWildcards<T>(table: HostnameTable<T>): void {
  table.wildcards.leading.sort((a, b) => b.suffix.length - a.suffix.length);
  table.wildcards.trailing.sort((a, b) => b.prefix.length - a.prefix.length);
}

/**
 * The value for a name (`ngx_hash_find_combined`).
 *
 * @param exact Exact names, lower case.
 * @param wildcards The wildcards, longest first.
 * @param name The name, lower case, without a trailing dot.
 * @returns The value, or `undefined` when no key takes the name.
 */
export function findHostname<T>(
  exact: ReadonlyMap<string, T>,
  wildcards: HostnameWildcards<T>,
  name: string,
): T | undefined {
  const found = exact.get(name);
  if (found !== undefined) return found;
  return findWildcard(wildcards, name);
}

/**
 * The longest leading wildcard, then the longest trailing one, that takes
 * a name (ngx_hash_find_wc_head, ngx_hash_find_wc_tail).
 *
 * @param wildcards The wildcards, longest first.
 * @param name The name, lower case, without a trailing dot.
 * @returns The value, or `undefined`.
 */
export function findWildcard<T>(
  wildcards: HostnameWildcards<T>,
  name: string,
): T | undefined {
  for (const { suffix, bare, value } of wildcards.leading) {
    // `.example.com` also takes `example.com` itself (value bits `00`);
    // `*.example.com` does not (`01`).
    if (
      name.endsWith(suffix) ||
      (bare && name.length === suffix.length - 1 && suffix.endsWith(name))
    ) {
      return value;
    }
  }
  for (const { prefix, value } of wildcards.trailing) {
    // At least one label after the prefix (ngx_hash_find_wc_tail).
    if (name.length > prefix.length && name.startsWith(prefix)) return value;
  }
  return undefined;
}
