/** What a suite does when nginx or Chromium is missing. */
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { decidePrerequisites } from "./_prerequisites.ts";

Deno.test("decidePrerequisites() skips loudly only outside CI and without root", async (t) => {
  const cases: [string, string[], boolean, boolean, boolean][] = [
    ["all there", [], false, false, false],
    ["all there, CI", [], false, true, false],
    ["missing, root installs it", ["nginx"], true, false, false],
    ["missing, not root, CI fails", ["nginx"], false, true, false],
    [
      "missing, not root, not CI: skip",
      ["nginx", "python3"],
      false,
      false,
      true,
    ],
  ];
  for (const [name, missing, root, ci, ignore] of cases) {
    await t.step(name, () => {
      const d = decidePrerequisites(
        "nginx_compat_test.ts",
        missing as ("nginx" | "python3")[],
        { root, ci },
      );
      strictEqual(d.ignore, ignore);
      strictEqual(d.line !== undefined, ignore);
    });
  }
  const skip = decidePrerequisites("browser_test.ts", ["chromium"], {
    root: false,
    ci: false,
  });
  match(
    skip.line!,
    /^SKIPPED browser_test\.ts: needs chromium, not installed and not root to install it \(apt-get install chromium, or run scripts\/install_test_deps\.sh as root\); with CI=true this fails$/,
  );
  deepStrictEqual(skip.line!.split("\n").length, 1);
});
