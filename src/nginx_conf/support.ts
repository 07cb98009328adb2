/**
 * What the gateway does with each nginx directive, as the README lists it:
 * generated from the directive table, so the list and the behaviour cannot
 * drift apart (a test compares the README with {@linkcode supportList}).
 *
 * @module
 */

import { DIRECTIVES } from "./directives.ts";

/**
 * The README's list of directives, by what the gateway does with them.
 *
 * @returns Markdown: three bullet lists.
 *
 * @example Usage
 * ```ts
 * import { supportList } from "./support.ts";
 * import { match } from "node:assert/strict";
 *
 * match(supportList(), /`proxy_set_header`/);
 * ```
 */
export function supportList(): string {
  const runs: string[] = [];
  const ignored = new Map<string, string[]>();
  const refused = new Map<string, string[]>();
  const defaults: string[] = [];
  for (
    const [name, specs] of [...DIRECTIVES].sort(([a], [b]) => a < b ? -1 : 1)
  ) {
    // A name has one entry per context; the first says what is done.
    const spec = specs[0]!;
    if (name.startsWith("station_")) continue;
    switch (spec.disposition) {
      case "map":
        runs.push(`\`${name}\``);
        break;
      case "warn":
        ignored.set(spec.why!, [
          ...(ignored.get(spec.why!) ?? []),
          `\`${name}\``,
        ]);
        break;
      case "emerg":
        refused.set(spec.why!, [
          ...(refused.get(spec.why!) ?? []),
          `\`${name}\``,
        ]);
        break;
      case "default":
        defaults.push(`\`${name} ${spec.defaultValue}\``);
    }
  }
  const grouped = (m: Map<string, string[]>) =>
    [...m].map(([why, names]) => `  - ${names.join(", ")}: ${why}.`).join("\n");
  return [
    `- **Run as nginx runs them**: ${runs.join(", ")}.`,
    `- **Accepted only at nginx's default** (any other value is refused): ${
      defaults.join(", ")
    }.`,
    `- **Accepted and ignored**, with one \`[warn]\` naming the line:`,
    grouped(ignored),
    `- **Refused** with \`[emerg] … in FILE:LINE\` (\`--check\` names all of them at once):`,
    grouped(refused),
  ].join("\n") + "\n";
}
