/**
 * The corpus report: each real-world nginx.conf of
 * tests/testdata/nginx_conf/corpus (or, with `--holdout`, the held-out set;
 * with `--unseen`, the set kept for one final measure) checked by `nginx -t`
 * and the gateway's `--check`, then run side by side by nginx 1.22 and the
 * gateway on the same requests; one row per file and the totals. `--unseen2`
 * to `--unseen10` run the later unseen sets the same way (`--NAME` for any
 * set of `CASE_SETS`). `--tally` prints the directive tally of corpus and
 * holdout instead (of an unseen set alone with its flag: the text only,
 * nothing runs); `--only NAME` runs one
 * file and prints every difference; `--strict` also compares the named
 * differences the report masks by default; `--against-nginx` runs nginx
 * beside nginx instead of the gateway (a check of the files and the harness:
 * it must find no difference).
 *
 * ```sh
 * deno run -A scripts/corpus_report.ts [--holdout|--unseen|--unseen2|--unseen3|--unseen4|--unseen5|--unseen6|--unseen7|--unseen8|--unseen9|--unseen10] [--only NAME] [--strict] [--tally] [--against-nginx]
 * ```
 *
 * @module
 */

import {
  CASE_SETS,
  caseDirs,
  compareFile,
  type FileResult,
  MASKED,
  readConfTree,
  reportTable,
  tally,
  tallyTable,
  totals,
} from "../tests/nginx_conf/_corpus/mod.ts";

const args = Deno.args;
const encoder = new TextEncoder();
/** Prints a line on stdout (the report) or stderr (progress). */
function print(text: string, to: "stdout" | "stderr" = "stdout"): void {
  (to === "stdout" ? Deno.stdout : Deno.stderr).writeSync(
    encoder.encode(`${text}\n`),
  );
}
// The set named by its flag (`--holdout`, `--unseen3` …); the corpus when none.
const set = CASE_SETS.find((name) => args.includes(`--${name}`)) ?? "corpus";
const only = args[args.indexOf("--only") + 1];

if (args.includes("--tally")) {
  const sets = set === "corpus" || set === "holdout"
    ? [...caseDirs("corpus"), ...caseDirs("holdout")]
    : caseDirs(set);
  const trees = sets.map((dir) =>
    readConfTree(
      `${dir}/nginx.conf`,
      dir,
      (arg) => arg.replace("{{PREFIX}}/conf/", `${dir}/`),
    )
  );
  print(tallyTable(tally(trees)));
} else {
  const dirs = caseDirs(set).filter((d) =>
    !args.includes("--only") || d.endsWith(`/${only}`)
  );
  const rows: FileResult[] = new Array(dirs.length);
  // Two files at a time: the machines have two cores.
  let next = 0;
  const worker = async () => {
    while (next < dirs.length) {
      const i = next++;
      rows[i] = await compareFile(dirs[i]!, {
        strict: args.includes("--strict"),
        against: args.includes("--against-nginx") ? "nginx" : "gateway",
      });
      print(`${rows[i]!.name}: ${rows[i]!.first || "same"}`, "stderr");
    }
  };
  await Promise.all([worker(), worker()]);
  print(`## ${set}\n\n${reportTable(rows)}\n\n${totals(rows)}\n`);
  if (args.includes("--only")) {
    for (const r of rows) print(r.all.map((d) => `- ${d}`).join("\n"));
  }
  const traces = rows.filter((r) => r.gatewayTrace);
  for (const r of traces) print(`- ${r.name}: ${r.gatewayTrace}`);
  print(`\nMasked:\n${MASKED.map((m) => `- ${m}`).join("\n")}`);
}
