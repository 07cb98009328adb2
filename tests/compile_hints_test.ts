/**
 * `deno task compile` when it cannot build: one clear message, no Rust
 * backtrace, for a wrong `DENORT_BIN` and for a machine without network.
 */
import { match, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { refusedPort } from "./_utils.ts";

const PROJECT = fileURLToPath(new URL("..", import.meta.url));
const COMPILE = fileURLToPath(
  new URL("../scripts/compile.ts", import.meta.url),
);

/**
 * Runs scripts/compile.ts as `deno task compile` does, into `dir`, from the
 * project (or from `cwd`, whose `src/main.ts` it then compiles).
 */
async function compile(
  dir: string,
  env: Record<string, string>,
  cwd = PROJECT,
) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-run",
      "--allow-read",
      `--allow-write=${dir}`,
      "--allow-env",
      COMPILE,
      "--output",
      `${dir}/station-gateway.exe`,
    ],
    cwd,
    // The machine's RUST_BACKTRACE=1, as a developer's shell may have it.
    env: { NO_COLOR: "1", RUST_BACKTRACE: "1", ...env },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const text = new TextDecoder();
  return {
    code: out.code,
    stdout: text.decode(out.stdout),
    stderr: text.decode(out.stderr),
  };
}

Deno.test("task compile refuses a DENORT_BIN that is not denort, in one line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/small`, "not denort");
    const cases: [string, RegExp][] = [
      [
        `${dir}/missing.exe`,
        /: no such file; it must name the denort\.exe file unzipped from denort-x86_64-pc-windows-msvc\.zip/,
      ],
      [dir, /: it is a folder;/],
      [`${dir}/small`, /: it is too small to be denort;/],
    ];
    for (const [path, reason] of cases) {
      const run = await compile(dir, { DENORT_BIN: path });
      strictEqual(run.code, 1, run.stderr);
      match(
        run.stderr,
        new RegExp(`^Cannot use DENORT_BIN "${path.replaceAll("/", "\\/")}"`),
      );
      match(run.stderr, reason);
      strictEqual(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
      strictEqual(run.stdout, "", "nothing was started");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task compile offline prints its hint with no Rust backtrace before it", async () => {
  const dir = await Deno.makeTempDir();
  const closed = `http://127.0.0.1:${refusedPort()}/`;
  try {
    // An empty cache and every download through a closed port: offline.
    // What is compiled is a one-line program, not the gateway: in an empty
    // cache `deno compile` type-checks its program before it downloads the
    // base binary, about 7 s of CPU for the gateway (past the 120 s bound on
    // a loaded machine) against 2 s, and the hint is the script's answer to
    // the failed download whatever the program. `deno compile` still starts
    // its type checker (`Check src/main.ts`) before the download, even for a
    // `@ts-nocheck` file: with Deno's default libraries (`deno.window`) that
    // start cost about 2.3 s of CPU in an empty cache, with ES5's alone (the
    // program's own deno.json) about 0.7 s. The download still fails after
    // the check, as the gateway's does.
    await Deno.mkdir(`${dir}/app/src`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/app/deno.json`,
      JSON.stringify({ compilerOptions: { lib: ["es5"] } }),
    );
    await Deno.writeTextFile(
      `${dir}/app/src/main.ts`,
      '// @ts-nocheck\nconsole.log("x");\n',
    );
    const run = await compile(dir, {
      DENO_DIR: `${dir}/cache`,
      HTTP_PROXY: closed,
      HTTPS_PROXY: closed,
      NO_PROXY: "",
    }, `${dir}/app`);
    strictEqual(run.code === 0, false, run.stdout);
    strictEqual(
      /backtrace|panicked|RUST_BACKTRACE/i.test(run.stderr),
      false,
      run.stderr,
    );
    // The base binary's download is what failed, not the type check.
    match(run.stderr, /\nDownload \S+\/denort-x86_64-pc-windows-msvc\.zip\n/);
    match(run.stderr, /Cannot compile for x86_64-pc-windows-msvc: /);
    match(
      run.stderr.trimEnd(),
      /DENORT_BIN=\/path\/to\/denort\.exe deno task compile$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
