/**
 * `split_clients` (ngx_http_split_clients_module): a variable whose value
 * is chosen by the MurmurHash2 of its source, each entry taking its
 * percentage of the 32-bit hash range in order, `*` the rest.
 *
 * @module
 */

import type { ComplexValue, MapConf } from "../engine/mod.ts";
import type { Directive } from "./parser.ts";

/** What compiling the block reports to, and compiles values with. */
export interface SplitCompiler {
  /** A refusal at a line. */
  fail(d: Directive, message: string): void;
  /** The source's compiled value. */
  value(d: Directive, text: string): ComplexValue;
}

/**
 * Compiles a `split_clients` block (ngx_conf_split_clients_block).
 *
 * @param d The block.
 * @param c Where refusals go, and the value compiler.
 * @returns The source and the lookup, as a `geo` block's.
 */
export function compileSplitClients(
  d: Directive,
  c: SplitCompiler,
): Pick<MapConf, "source" | "geo"> {
  const parts: { upTo: number; value: string }[] = [];
  let sum = 0;
  let last = 0;
  for (const entry of d.block ?? []) {
    const percent = entry.name === "*" ? 0 : percentOf(entry.name);
    if (percent === null) {
      c.fail(entry, `invalid percent value "${entry.name}"`);
      continue;
    }
    sum = percent === 0 ? 10000 : sum + percent;
    if (sum > 10000) {
      c.fail(entry, "percent total is greater than 100%");
      break;
    }
    // Integer arithmetic as nginx's (uint64_t), exact in a double.
    if (percent !== 0) last += Math.floor(percent * 0xffffffff / 10000);
    parts.push({ upTo: percent === 0 ? 0 : last, value: entry.args[0] ?? "" });
  }
  return {
    source: c.value(d, d.args[0]!),
    geo: {
      lookup: (source) => {
        const hash = murmurHash2(source);
        for (const part of parts) {
          if (hash < part.upTo || part.upTo === 0) return part.value;
        }
        return "";
      },
      forwardedFor: null,
    },
  };
}

/**
 * A percentage in hundredths (`ngx_atofp(…, 2)` of the text before `%`):
 * `null` where nginx says "invalid percent value" (no `%`, zero, more
 * than two decimals).
 */
function percentOf(text: string): number | null {
  const m = /^(\d*)(?:\.(\d{0,2}))?%$/.exec(text);
  if (m === null || text === "%") return null;
  const n = Number(`${m[1]}${(m[2] ?? "").padEnd(2, "0")}`);
  return n === 0 ? null : n;
}

/**
 * `ngx_murmur_hash2` of a value's bytes (a field's value is its bytes
 * already, one character each; other text is UTF-8).
 *
 * @param text The value.
 * @returns The 32-bit hash.
 *
 * @example Usage
 * ```ts
 * import { murmurHash2 } from "./compile_split_clients.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(murmurHash2(""), 0);
 * ```
 */
export function murmurHash2(text: string): number {
  // deno-lint-ignore no-control-regex
  const data = /^[\x00-\xff]*$/.test(text)
    ? Uint8Array.from(text, (c) => c.charCodeAt(0))
    : new TextEncoder().encode(text);
  const m = 0x5bd1e995;
  let len = data.length;
  let h = len >>> 0;
  let i = 0;
  while (len >= 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) |
      (data[i + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
    i += 4;
    len -= 4;
  }
  switch (len) {
    case 3:
      h ^= data[i + 2]! << 16;
    // falls through
    case 2:
      h ^= data[i + 1]! << 8;
    // falls through
    case 1:
      h ^= data[i]!;
      h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h >>> 0;
}
