/** The .exe, `deno task start` and the spawning tests use the same permissions. */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import {
  COMPILE_FLAGS,
  compileArgs,
  DEFAULT_TARGET,
  noConsoleOutput,
} from "../scripts/compile.ts";
import { GATEWAY_FLAGS } from "./_utils.ts";

Deno.test("compileArgs() bakes the run flags and no blanket permission", () => {
  const args = compileArgs(DEFAULT_TARGET, "dist/station-gateway.exe");
  strictEqual(args.includes("-A") || args.includes("--allow-all"), false);
  deepStrictEqual(args.slice(-5), [
    "--target",
    "x86_64-pc-windows-msvc",
    "--output",
    "dist/station-gateway.exe",
    "src/main.ts",
  ]);
});

Deno.test("deno task start runs with the compile flags", () => {
  const start = denoJson.tasks.start.command;
  strictEqual(start, `deno run -q ${GATEWAY_FLAGS.join(" ")} src/main.ts`);
});

Deno.test("compileArgs() builds a console-less twin for the scheduled task", () => {
  strictEqual(
    noConsoleOutput("dist/station-gateway.exe"),
    "dist/station-gateway-noconsole.exe",
  );
  const args = compileArgs(
    DEFAULT_TARGET,
    "dist/station-gateway-noconsole.exe",
    true,
  );
  strictEqual(args.includes("--no-terminal"), true);
  deepStrictEqual(
    args.filter((a) =>
      a.startsWith("--allow") || a.startsWith("--unstable") ||
      a.startsWith("--v8-flags")
    ),
    [...COMPILE_FLAGS],
  );
  strictEqual(
    compileArgs(DEFAULT_TARGET, "x.exe").includes("--no-terminal"),
    false,
  );
});
