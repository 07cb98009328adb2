/**
 * Builds `dist/station-gateway.exe` (console) and
 * `dist/station-gateway-noconsole.exe` (`--no-terminal`, for the scheduled
 * task) for Windows with `deno compile`.
 *
 * The permissions baked into the executable are exactly the ones
 * `deno task start` runs with and the tests spawn the gateway with
 * (`GATEWAY_FLAGS` in `tests/_utils.ts`; `tests/compile_flags_test.ts` keeps
 * the three in step). `deno compile` needs the `denort` base binary for the
 * target; it downloads it unless `DENORT_BIN` names a local copy. Where the
 * download is blocked, this script says so and exits non-zero.
 *
 * Usage: deno task compile [--target TRIPLE] [--output FILE]
 *
 * @module
 */

import { parseArgs } from "node:util";

/** The runtime permissions and flags the executable is built with. */
export const COMPILE_FLAGS = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  // Only for `task install|remove|status`; nothing else is run.
  "--allow-run=schtasks,icacls",
  // nginx's `$hostname` (src/engine/variables.ts); no other system value.
  "--allow-sys=hostname",
  // `req.signal` aborts only when the client really goes away, not when
  // the response is sent (denoland/deno#27005).
  "--unstable-no-legacy-abort",
  // V8's young generation capped at 4 MiB, which bounds peak RSS under many
  // connections at no measurable throughput cost; `gc()` exposed for
  // src/runtime/gc_pacer.ts and src/runtime/heap_pacer.ts. Figures: scripts/README.md.
  // A regex that backtracks past V8's bound finishes on its linear engine:
  // a client's URI or header cannot stall the event loop (src/engine/regex.ts).
  // No allocation-site pretenuring: under many connections V8 saw a request's
  // objects (a Headers walk, an upstream exchange) outlive a scavenge and
  // moved their allocation sites to the old generation, where every later
  // request's objects then waited for a mark-compact (scripts/README.md,
  // "Pretenuring off").
  "--v8-flags=--max-semi-space-size=4,--expose-gc,--enable-experimental-regexp-engine-on-excessive-backtracks,--no-allocation-site-pretenuring",
] as const;

/** The default target: the station PCs. */
export const DEFAULT_TARGET = "x86_64-pc-windows-msvc";

/** Give up on a compile (and its download) after this long: never hang. */
const TIMEOUT_MS = 180_000;

/**
 * The `deno compile` arguments for a target and output file.
 *
 * @param target The target triple.
 * @param output The output path.
 * @param noTerminal Build the console-less variant (`--no-terminal`): no
 * console window when the scheduled task starts it at logon. Before
 * denoland/deno#28823 such binaries panicked on the missing stdio handles
 * (denoland/deno#27730); the gateway also never relies on stdout/stderr.
 * @returns The arguments after `deno`.
 */
export function compileArgs(
  target: string,
  output: string,
  noTerminal = false,
): string[] {
  return [
    "compile",
    ...COMPILE_FLAGS,
    ...(noTerminal ? ["--no-terminal"] : []),
    "--target",
    target,
    "--output",
    output,
    "src/main.ts",
  ];
}

/** The console-less build's file name beside the console one. */
export function noConsoleOutput(output: string): string {
  return output.replace(/(\.exe)?$/i, "-noconsole$1");
}

async function compileOne(args: string[], output: string): Promise<number> {
  // deno-lint-ignore no-console
  console.log(`deno ${args.join(" ")}`);
  const child = new Deno.Command(Deno.execPath(), {
    args,
    // A failed download is an error to explain, not a crash to debug: no
    // Rust backtrace before the hint below, even when the shell sets one.
    env: { RUST_BACKTRACE: "0" },
    stdout: "inherit",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill(), TIMEOUT_MS);
  const [status, stderr] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
  ]);
  clearTimeout(timer);
  if (status.success) {
    const { size } = await Deno.stat(output);
    // deno-lint-ignore no-console
    console.log(`built ${output} (${(size / 1024 / 1024).toFixed(1)} MiB)`);
    return 0;
  }
  // deno-lint-ignore no-console
  console.error(stderr.split(/\n\s*Stack backtrace:/)[0]!.trimEnd());
  return status.code === 0 ? 1 : status.code;
}

/** Why `DENORT_BIN` cannot be the base binary, or null. */
function denortProblem(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    if (info.isDirectory) return "it is a folder";
    return info.size < 1024 * 1024 ? "it is too small to be denort" : null;
  } catch (error) {
    return error instanceof Deno.errors.NotFound
      ? "no such file"
      : `it cannot be read (${error instanceof Error ? error.message : error})`;
  }
}

async function run(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      target: { type: "string", default: DEFAULT_TARGET },
      output: { type: "string", default: "dist/station-gateway.exe" },
    },
  });
  const denort = Deno.env.get("DENORT_BIN");
  if (denort) {
    const problem = denortProblem(denort);
    if (problem !== null) {
      // deno-lint-ignore no-console
      console.error(
        `Cannot use DENORT_BIN "${denort}": ${problem}; it must name the ` +
          `denort${values.target.includes("windows") ? ".exe" : ""} file ` +
          `unzipped from denort-${values.target}.zip for Deno ${Deno.version.deno}`,
      );
      return 1;
    }
    // deno-lint-ignore no-console
    console.log(`DENORT_BIN=${denort}`);
  }
  for (const noTerminal of [false, true]) {
    const output = noTerminal ? noConsoleOutput(values.output) : values.output;
    const code = await compileOne(
      compileArgs(values.target, output, noTerminal),
      output,
    );
    if (code === 0) continue;
    if (!denort) {
      // deno-lint-ignore no-console
      console.error(
        `Cannot compile for ${values.target}: deno compile needs the denort base ` +
          `binary for that target and could not download it.\n` +
          `Offline, download denort-${values.target}.zip for Deno ${Deno.version.deno} ` +
          `on a connected machine, unzip it here and run:\n` +
          `  DENORT_BIN=/path/to/denort${
            values.target.includes("windows") ? ".exe" : ""
          } deno task compile`,
      );
    }
    return code;
  }
  return 0;
}

if (import.meta.main) {
  Deno.exit(await run());
}
