/**
 * The programs some suites need besides Deno (nginx beside the gateway,
 * Chromium for the browser test), and what happens when one is missing:
 * as root, the suite installs it (scripts/install_test_deps.sh); elsewhere
 * outside CI the suite is skipped with one loud line naming what and why;
 * in CI (`CI=true`) a missing program stays a failure, so CI cannot pass
 * by skipping.
 *
 * @module
 */

/** A program a suite needs. */
export type Tool = "nginx" | "chromium" | "python3";

const PLACES: Record<Tool, string[]> = {
  nginx: ["/usr/sbin/nginx", "/usr/bin/nginx"],
  chromium: ["/usr/bin/chromium"],
  python3: ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"],
};

/** What the suite does about its prerequisites. */
export interface PrerequisiteDecision {
  /** Skip every test of the suite. */
  ignore: boolean;
  /** The line to print when skipping. */
  line?: string;
}

/**
 * Decides, from what is missing and where the suite runs.
 *
 * @param suite The suite's file name.
 * @param missing The programs not installed.
 * @param where Whether the process is root (can install) and in CI.
 * @returns Whether to skip, and the line saying so.
 */
export function decidePrerequisites(
  suite: string,
  missing: Tool[],
  where: { root: boolean; ci: boolean },
): PrerequisiteDecision {
  if (missing.length === 0 || where.root || where.ci) return { ignore: false };
  const list = missing.join(" ");
  return {
    ignore: true,
    line: `SKIPPED ${suite}: needs ${list}, not installed and not root to ` +
      `install it (apt-get install ${list}, or run ` +
      `scripts/install_test_deps.sh as root); with CI=true this fails`,
  };
}

function installed(tool: Tool): boolean {
  return PLACES[tool].some((path) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  });
}

/**
 * The `Deno.test` options for a Linux-only suite that needs `tools`:
 * ignored off Linux, and ignored with a loud line when a tool is missing
 * and cannot be installed outside CI.
 *
 * @param suite The suite's file name, for the line.
 * @param tools The programs it needs.
 * @returns `{ ignore }` for every test of the suite.
 */
export function suiteNeeds(suite: string, tools: Tool[]): { ignore: boolean } {
  if (Deno.build.os !== "linux") return { ignore: true };
  const decision = decidePrerequisites(
    suite,
    tools.filter((tool) => !installed(tool)),
    { root: Deno.uid() === 0, ci: Deno.env.get("CI") === "true" },
  );
  if (decision.line !== undefined) {
    Deno.stderr.writeSync(new TextEncoder().encode(`\n${decision.line}\n\n`));
  }
  return { ignore: decision.ignore };
}

let prlimit: boolean | undefined;

/**
 * Whether `prlimit` can start a process with fewer descriptors (Linux with
 * util-linux), for the tests that run the gateway out of descriptors. Asked
 * on the first call only, so suites that never ask start no process.
 *
 * @returns `true` when `prlimit --version` runs.
 */
export function hasPrlimit(): boolean {
  prlimit ??= Deno.build.os === "linux" && (() => {
    try {
      return new Deno.Command("prlimit", { args: ["--version"] }).outputSync()
        .success;
    } catch {
      return false;
    }
  })();
  return prlimit;
}
