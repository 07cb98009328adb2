/**
 * The near-miss suggestion for a mistyped flag or config key: `--lisen` is
 * one edit from `--listen`, so the error says so.
 *
 * @module
 */

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The known word closest to a mistyped one, when it is close enough to be
 * what was meant: at most two edits (one for words of up to four letters),
 * case ignored, and no tie between two candidates.
 *
 * @param word The word given.
 * @param known The words that exist.
 * @returns The suggestion, or `undefined`.
 *
 * @example Usage
 * ```ts
 * import { closestWord } from "./did_you_mean.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(closestWord("--lisen", ["--listen", "--root"]), "--listen");
 * strictEqual(closestWord("--frobnicate", ["--listen", "--root"]), undefined);
 * ```
 */
export function closestWord(
  word: string,
  known: readonly string[],
): string | undefined {
  const limit = word.replace(/^-+/, "").length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = Infinity;
  let tie = false;
  for (const candidate of known) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      [best, bestDistance, tie] = [candidate, d, false];
    } else if (d === bestDistance) {
      tie = true;
    }
  }
  return bestDistance <= limit && !tie ? best : undefined;
}
