/** The command line: misuse versus bad values, and the near miss. */
import { strictEqual, throws } from "node:assert/strict";
import {
  parseCliArgs,
  unknownOption,
  UsageError,
} from "../../src/config/cli.ts";
import { closestWord } from "../../src/config/did_you_mean.ts";

Deno.test("parseCliArgs() throws UsageError for misuse and TypeError for a bad value", async (t) => {
  const cases: [string[], new (m: string) => Error, string][] = [
    [
      ["--lisen", "1"],
      UsageError,
      'unknown option "--lisen"; did you mean "--listen"?',
    ],
    [
      ["--lisen=1"],
      UsageError,
      'unknown option "--lisen"; did you mean "--listen"?',
    ],
    [
      ["--uptream", "x"],
      UsageError,
      'unknown option "--uptream"; did you mean "--upstream"?',
    ],
    [
      ["--error-log-levl", "x"],
      UsageError,
      'unknown option "--error-log-levl"; did you mean "--error-log-level"?',
    ],
    [["--frobnicate"], UsageError, 'unknown option "--frobnicate"'],
    [["-x"], UsageError, 'unknown option "-x"'],
    [["--listen"], UsageError, 'option "--listen" needs a value'],
    [
      ["--listen", "--root", "x"],
      UsageError,
      'option "--listen" needs a value',
    ],
    [["--help=yes"], UsageError, 'option "--help" takes no value'],
    [["extra"], UsageError, 'unexpected argument "extra"'],
    [
      ["--log-keep", "x"],
      TypeError,
      'Cannot parse log-keep "x": expected a whole number',
    ],
    [
      ["--log-keep", "99999999999999999999"],
      TypeError,
      'Cannot parse log-keep "99999999999999999999": expected a whole number',
    ],
    [
      ["--upstream-keepalive", "9007199254740993"],
      TypeError,
      'Cannot parse upstream-keepalive "9007199254740993": expected a whole number',
    ],
  ];
  for (const [args, type, message] of cases) {
    await t.step(args.join(" "), () => {
      throws(() => parseCliArgs(args), (error: unknown) => {
        strictEqual((error as Error).constructor, type);
        strictEqual((error as Error).message, message);
        return true;
      });
    });
  }
});

Deno.test("closestWord() suggests only a clear near miss", async (t) => {
  const flags = [
    "--listen",
    "--root",
    "--upstream",
    "--upstream-group",
    "--log-keep",
    "--config",
  ];
  const cases: [string, string | undefined][] = [
    ["--lisen", "--listen"],
    ["--LISTEN", "--listen"],
    ["--rot", "--root"],
    ["--upstreams", "--upstream"],
    ["--upstream-grup", "--upstream-group"],
    ["--log-kep", "--log-keep"],
    ["--conifg", "--config"],
    ["--frobnicate", undefined],
    ["--x", undefined],
    ["", undefined],
  ];
  for (const [word, expected] of cases) {
    await t.step(`${word} -> ${expected}`, () => {
      strictEqual(closestWord(word, flags), expected);
    });
  }
  strictEqual(closestWord("upstrem", ["upstream", "root"]), "upstream");
  strictEqual(
    closestWord("ab", ["ac", "ad"]),
    undefined,
    "a tie suggests nothing",
  );
});

Deno.test("unknownOption() names the option and the near miss in one line", () => {
  strictEqual(
    unknownOption("--lisen"),
    'unknown option "--lisen"; did you mean "--listen"?',
  );
  strictEqual(unknownOption("--zzz"), 'unknown option "--zzz"');
});

Deno.test("parseCliArgs() answers another server's port option with --listen", () => {
  for (const args of [["--port", "9000"], ["--port=9000"], ["-p", "9000"]]) {
    throws(
      () => parseCliArgs(args),
      (e: Error) =>
        e instanceof UsageError &&
        /^unknown option "(--port|--port=9000|-p)"; the port is set with "--listen", e\.g\. --listen 9000 or --listen 0\.0\.0\.0:9000$/
          .test(e.message),
      args.join(" "),
    );
  }
});
