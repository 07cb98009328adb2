/**
 * The station files of the unseen corpus that turn `ssi on`
 * (tests/testdata/nginx_conf/unseen5, README there): `nginx -t` and
 * `--check` agree, and nginx 1.22 and the gateway, each from its own copy
 * of the file, give the same statuses, client-visible fields, upstream
 * requests and log lines on the corpus probes (their pages have no SSI
 * commands: the filter's head changes alone must match).
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  buildAhead,
  compareFile,
  TESTDATA,
} from "../nginx_conf/_corpus/mod.ts";
import { suiteNeeds } from "../_prerequisites.ts";

const NEEDS = suiteNeeds("ssi/ssi_corpus_test.ts", ["nginx"]);

const NAMES = ["ssi_downloads_app", "ssi_five_upstreams"];

// The gateway's stations are built now, so their folders have settled when
// the tests run.
if (!NEEDS.ignore) buildAhead(NAMES.map((n) => join(TESTDATA, "unseen5", n)));

for (const name of NAMES) {
  Deno.test(
    `unseen5 ${name}: nginx and the gateway behave alike from the same file`,
    NEEDS,
    async () => {
      const row = await compareFile(join(TESTDATA, "unseen5", name));
      deepStrictEqual(
        { agree: row.verdictsAgree, runs: row.runs, differences: row.all },
        { agree: true, runs: true, differences: [] },
        row.first,
      );
    },
  );
}
