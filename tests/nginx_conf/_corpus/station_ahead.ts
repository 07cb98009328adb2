/**
 * The gateway's stations built ahead of their runs. The gateway proves a
 * file inside its root only once the folders on its path have been still
 * for a moment, and Deno reports a folder's change time in whole seconds,
 * which counts as the end of that second (`src/static/settled_proof.ts`):
 * a station written just before its probes waited up to a second for its
 * first file. A test file builds its cases' stations when it loads (in a
 * shard, before any test of the shard runs); `compareFile` builds each
 * again in place, which writes files but no folder entry, and the ones no
 * test took are removed when the worker unloads.
 *
 * @module
 */

import { dirname } from "node:path";
import { buildStation } from "./station.ts";

const ready = new Map<string, string[]>();
let listening = false;

function removeLeft(): void {
  for (const bases of ready.values()) {
    for (const base of bases) {
      try {
        Deno.removeSync(base, { recursive: true });
      } catch {
        // Removed already.
      }
    }
  }
  ready.clear();
}

/**
 * Builds a gateway station of each case now, for `compareFile` to take.
 *
 * @param caseDirs The case folders, as `compareFile` will be given them.
 */
export function buildAhead(caseDirs: readonly string[]): void {
  if (!listening) {
    listening = true;
    globalThis.addEventListener("unload", removeLeft);
  }
  for (const caseDir of caseDirs) {
    const { prefix } = buildStation(caseDir, { listen: [], upstream: [] });
    ready.set(caseDir, [...(ready.get(caseDir) ?? []), dirname(prefix)]);
  }
}

/**
 * A station folder built ahead for a case, taken (once).
 *
 * @param caseDir The case folder.
 * @returns Its folder, or `undefined` when none is left.
 */
export function takeAhead(caseDir: string): string | undefined {
  return ready.get(caseDir)?.pop();
}
