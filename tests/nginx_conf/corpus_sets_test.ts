/**
 * The report's sets (`_corpus/report.ts` `CASE_SETS`): every set folder under
 * tests/testdata/nginx_conf (`corpus`, `holdout`, `unseen`, `unseen2` …) has
 * its `--NAME` flag in `scripts/corpus_report.ts`, in the order drawn, so a
 * new set cannot be committed without a way to measure it.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { CASE_SETS, caseDirs, TESTDATA } from "./_corpus/mod.ts";

/** `unseen` is the first unseen set, `unseenN` the N-th. */
function drawOrder(name: string): number {
  if (name === "corpus") return 0;
  if (name === "holdout") return 1;
  return 1 + Number(name.slice("unseen".length) || "1");
}

Deno.test("corpus report: every set folder is a set the report runs", () => {
  const folders = [...Deno.readDirSync(TESTDATA)]
    .filter((e) => e.isDirectory && /^(corpus|holdout|unseen\d*)$/.test(e.name))
    .map((e) => e.name)
    .sort((a, b) => drawOrder(a) - drawOrder(b));
  deepStrictEqual([...CASE_SETS], folders);
  for (const set of CASE_SETS) {
    ok(caseDirs(set).length > 0, `${set} holds no case`);
  }
});
