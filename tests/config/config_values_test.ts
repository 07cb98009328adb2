/** Single setting values: sizes, times, switches, levels, headers, paths. */
import { strictEqual, throws } from "node:assert/strict";
import {
  parseDuration,
  parseHeaderValue,
  parseLevel,
  parseSize,
  parseStatusPath,
  parseSwitch,
  pathProblem,
} from "../../src/config/config_values.ts";

Deno.test("parseSize() reads nginx sizes", () => {
  strictEqual(parseSize("0", "s"), 0);
  strictEqual(parseSize("512k", "s"), 524288);
  strictEqual(parseSize("16M", "s"), 16777216);
  strictEqual(parseSize("1g", "s"), 1073741824);
  throws(() => parseSize("1.5m", "s"), TypeError);
});

Deno.test("parseDuration() reads nginx times, bare numbers as seconds", async (t) => {
  const table: [string, number | RegExp][] = [
    ["60s", 60_000],
    ["60", 60_000],
    ["250ms", 250],
    ["2m", 120_000],
    ["1h", 3_600_000],
    [" 5s ", 5_000],
    ["0", /must be more than 0/],
    ["1.5s", /expected a time like 500ms/],
    ["5 s", /expected a time like 500ms/],
    ["5d", /expected a time like 500ms/],
    ["", /expected a time like 500ms/],
  ];
  for (const [input, want] of table) {
    await t.step(JSON.stringify(input), () => {
      if (typeof want === "number") {
        strictEqual(parseDuration(input, "t"), want);
      } else throws(() => parseDuration(input, "t"), want);
    });
  }
});

Deno.test("parseSwitch(), parseLevel(), parseHeaderValue() and parseStatusPath() refuse anything else, naming it", async (t) => {
  const table: [string, () => unknown, unknown | RegExp][] = [
    ["switch on", () => parseSwitch("on", "spa-fallback"), true],
    ["switch off", () => parseSwitch("off", "spa-fallback"), false],
    [
      "switch yes",
      () => parseSwitch("yes", "spa-fallback"),
      /Cannot parse spa-fallback "yes": expected on or off/,
    ],
    ["level warn", () => parseLevel("warn"), "warn"],
    [
      "level WARN",
      () => parseLevel("WARN"),
      /Cannot parse error-log-level "WARN": expected one of emerg, alert/,
    ],
    [
      "header trimmed",
      () => parseHeaderValue(" no-cache ", "cache-html"),
      "no-cache",
    ],
    [
      "header empty",
      () => parseHeaderValue(" ", "cache-html"),
      /Cannot parse cache-html " "/,
    ],
    [
      "header with CR LF",
      () => parseHeaderValue("no-cache\r\nx: 1", "cache-html"),
      /Cannot parse cache-html/,
    ],
    ["status off", () => parseStatusPath("off"), null],
    ["status path", () => parseStatusPath("/__status"), "/__status"],
    [
      "status under /api/",
      () => parseStatusPath("/api/status"),
      /outside \/api\//,
    ],
    [
      "status relative",
      () => parseStatusPath("status"),
      /Cannot parse status-path "status"/,
    ],
  ];
  for (const [name, run, want] of table) {
    await t.step(name, () => {
      if (want instanceof RegExp) throws(run, want);
      else strictEqual(run(), want);
    });
  }
});

Deno.test("parseSize() and parseDuration() refuse numbers they cannot hold exactly, naming the value as given", async (t) => {
  // [parser, value, message]
  const cases: [typeof parseSize, string, string][] = [
    [parseSize, "9007199254740992", "must be at most 9007199254740991 bytes"],
    [
      parseSize,
      "99999999999999999999",
      "must be at most 9007199254740991 bytes",
    ],
    [parseSize, "8388608g", "must be at most 9007199254740991 bytes"],
    [parseDuration, "2147483648ms", "must be at most 2147483647ms"],
    [parseDuration, "2147484", "must be at most 2147483647ms"],
    [parseDuration, "596524h", "must be at most 2147483647ms"],
    [parseDuration, "999999999999999999999s", "must be at most 2147483647ms"],
  ];
  for (const [parse, value, message] of cases) {
    await t.step(`${parse.name} ${value}`, () => {
      throws(() => parse(value, "x"), {
        name: "RangeError",
        message: `Cannot parse x "${value}": ${message}`,
      });
    });
  }
  strictEqual(parseSize("9007199254740991", "x"), Number.MAX_SAFE_INTEGER);
  strictEqual(parseDuration("2147483647ms", "x"), 2 ** 31 - 1);
});

Deno.test("pathProblem() finds what the OS cannot take as a path", async (t) => {
  // [path, family, refused]
  const cases: [string, "linux" | "windows", boolean][] = [
    ["html", "linux", false],
    ["/srv/app/html", "linux", false],
    ["a\0b", "linux", true],
    ["\0", "linux", true],
    ["a\nb", "linux", false],
    ["C:\\app\\html", "windows", false],
    ["\\\\?\\C:\\app", "windows", false],
    ["\\\\server\\share\\html", "windows", false],
    ["C:\\a\0b", "windows", true],
    ["C:\\a\nb", "windows", true],
    ["C:\\a|b", "windows", true],
    ["C:\\a?b", "windows", true],
    ["C:\\a*", "windows", true],
    ['C:\\"a"', "windows", true],
  ];
  for (const [path, family, refused] of cases) {
    await t.step(`${JSON.stringify(path)} on ${family}`, () => {
      strictEqual(pathProblem(path, family) !== null, refused);
    });
  }
});
