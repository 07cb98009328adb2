/**
 * The report's rows and totals.
 *
 * @module
 */

import { join } from "node:path";
import type { FileResult } from "./side_by_side.ts";
import { TESTDATA } from "./station.ts";

/**
 * The sets of case folders under tests/testdata/nginx_conf, in the order
 * they were drawn: `corpus` is tuned on, the others were each kept for a
 * measure on files the project had not seen (a new set is one more name).
 */
export const CASE_SETS = [
  "corpus",
  "holdout",
  "unseen",
  "unseen2",
  "unseen3",
  "unseen4",
  "unseen5",
  "unseen6",
  "unseen7",
  "unseen8",
  "unseen9",
  "unseen10",
] as const;

/** A set of case folders under tests/testdata/nginx_conf. */
export type CaseSet = typeof CASE_SETS[number];

/** The case folders of a set, by name. */
export function caseDirs(set: CaseSet): string[] {
  const dir = join(TESTDATA, set);
  return [...Deno.readDirSync(dir)]
    .filter((e) => e.isDirectory)
    .map((e) => join(dir, e.name))
    .sort();
}

function cell(text: string): string {
  const short = text.length > 160 ? `${text.slice(0, 157)}…` : text;
  return short.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** One Markdown row per file. */
export function reportTable(rows: FileResult[]): string {
  const yes = (b: boolean) => (b ? "yes" : "no");
  return [
    "| file | nginx -t | --check | verdicts agree | runs | behaves as nginx | first difference |",
    "|---|---|---|---|---|---|---|",
    ...rows.map((r) =>
      `| ${r.name} | ${r.nginx.ok ? "ok" : "fails"} | ${
        r.gateway.ok ? "ok" : "fails"
      } | ${yes(r.verdictsAgree)} | ${yes(r.runs)} | ${
        r.runs ? `${yes(r.behaves)} (${r.differences}/${r.probes})` : "—"
      } | ${cell(r.first)} |`
    ),
  ].join("\n");
}

/** The totals line. */
export function totals(rows: FileResult[]): string {
  const valid = rows.filter((r) => r.nginx.ok).length;
  const agree = rows.filter((r) => r.verdictsAgree).length;
  const runs = rows.filter((r) => r.runs).length;
  const behave = rows.filter((r) => r.behaves).length;
  return `${behave} of ${valid} files nginx accepts run with zero edits and behave as nginx ` +
    `(${rows.length} files: verdicts agree on ${agree}, ${runs} run side by side).`;
}
