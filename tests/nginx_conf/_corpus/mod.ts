/**
 * The corpus harness: real-world nginx.conf files (tests/testdata/nginx_conf/
 * corpus and holdout) run side by side by nginx 1.22 and the gateway, and
 * tallied by directive. Used by `scripts/corpus_report.ts` and
 * `tests/nginx_conf/corpus_side_by_side_test.ts`.
 *
 * @module
 */

export { type Directive, readConfTree, walk } from "./conf_tree.ts";
export { formOf } from "./forms.ts";
export { type Tally, tally, tallyTable } from "./tally.ts";
export { MASKED } from "./compare.ts";
export {
  compareFile,
  type CompareOptions,
  type FileResult,
} from "./side_by_side.ts";
export { assertSameAsNginx } from "./same_as_nginx.ts";
export { TESTDATA } from "./station.ts";
export { buildAhead } from "./station_ahead.ts";
export {
  CASE_SETS,
  caseDirs,
  type CaseSet,
  reportTable,
  totals,
} from "./report.ts";
