/**
 * One test case folder run side by side, asserted the same as nginx, and
 * checked to have reached each form it exists for.
 *
 * @module
 */
import { deepStrictEqual } from "node:assert/strict";
import { join } from "node:path";
import { compareFile } from "./side_by_side.ts";
import { TESTDATA } from "./station.ts";

/**
 * Runs `tests/testdata/nginx_conf/NAME` beside nginx 1.22: the verdicts
 * agree, it runs, nothing differs, and nginx's answers hold every line of
 * `reached` (so the case is known to exercise each form).
 */
export async function assertSameAsNginx(
  name: string,
  reached: readonly string[],
): Promise<void> {
  const row = await compareFile(join(TESTDATA, name));
  deepStrictEqual(
    { agree: row.verdictsAgree, runs: row.runs, differences: row.all },
    { agree: true, runs: true, differences: [] },
    row.first,
  );
  const sent = row.nginxAnswers.join("\n");
  for (const line of reached) {
    deepStrictEqual(sent.includes(line), true, `${line} in\n${sent}`);
  }
}
