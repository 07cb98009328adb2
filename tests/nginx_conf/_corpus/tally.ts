/**
 * The corpus tally: which directives, and which argument forms of each,
 * appear in how many files, so the engine's coverage can be prioritised.
 *
 * @module
 */

import { type Directive, walk } from "./conf_tree.ts";
import { formOf } from "./forms.ts";

/** Counts per directive and per form, in files. */
export interface Tally {
  files: number;
  directives: Map<string, { files: number; forms: Map<string, number> }>;
}

/**
 * Tallies the directives and forms of several files.
 *
 * @param trees Each file's directive tree.
 * @returns The counts, in files (a form counts once per file).
 */
export function tally(trees: Directive[][]): Tally {
  const directives: Tally["directives"] = new Map();
  for (const tree of trees) {
    const names = new Set<string>();
    for (const { directive } of walk(tree)) {
      if (directive.name === "upstream" && directive.args[0]) {
        names.add(directive.args[0]);
      }
    }
    const seen = new Map<string, Set<string>>();
    for (const { directive, parents } of walk(tree)) {
      // A map's, geo's or types' lines are entries, not directives.
      const owner = parents.at(-1)?.name ?? "";
      if (owner === "map" || owner === "geo" || owner === "types") continue;
      const forms = seen.get(directive.name) ?? new Set();
      forms.add(formOf(directive, parents, names));
      seen.set(directive.name, forms);
    }
    const servers = [...walk(tree)].filter(({ directive, parents }) =>
      directive.name === "server" && parents.at(-1)?.name === "http"
    ).length;
    if (servers > 1) {
      seen.set(
        "server",
        (seen.get("server") ?? new Set()).add(
          "several server blocks",
        ),
      );
    }
    for (const [name, forms] of seen) {
      const entry = directives.get(name) ?? { files: 0, forms: new Map() };
      entry.files++;
      for (const f of forms) {
        entry.forms.set(f, (entry.forms.get(f) ?? 0) + 1);
      }
      directives.set(name, entry);
    }
  }
  return { files: trees.length, directives };
}

/**
 * The tally as a Markdown table, directives by frequency, each followed by
 * its forms by frequency.
 *
 * @param t The tally.
 * @returns The table.
 */
export function tallyTable(t: Tally): string {
  const rows = ["| directive / form | files |", "|---|---|"];
  const sorted = [...t.directives].sort((a, b) =>
    b[1].files - a[1].files || a[0].localeCompare(b[0])
  );
  for (const [name, entry] of sorted) {
    rows.push(`| **${name}** | ${entry.files}/${t.files} |`);
    const forms = [...entry.forms].sort((a, b) =>
      b[1] - a[1] || a[0].localeCompare(b[0])
    );
    if (forms.length === 1 && forms[0]![0] === name) continue;
    for (const [form, n] of forms) {
      rows.push(`| &nbsp;&nbsp;\`${form.replaceAll("|", "\\|")}\` | ${n} |`);
    }
  }
  return rows.join("\n");
}
